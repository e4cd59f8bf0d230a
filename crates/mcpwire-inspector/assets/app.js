// The MCP Inspector's page. Plain JavaScript, no build step.
//
// Everything a server sends is untrusted: it is only ever put in the page as text
// (textContent, attribute values), never as HTML; links are made only for http(s) URLs;
// images and audio only as data: URLs of their own media type. An MCP App's own HTML runs only
// in a frame sandboxed to scripts alone (an opaque origin), and what it sends is text here too.
"use strict";

(function () {
  // ---- the token: from the URL's fragment, kept for this tab only ----
  const fragment = new URLSearchParams(location.hash.slice(1));
  if (fragment.get("token")) {
    sessionStorage.setItem("mcp-inspector-token", fragment.get("token"));
    history.replaceState(null, "", location.pathname);
  }
  const token = sessionStorage.getItem("mcp-inspector-token") || "";

  const $ = (id) => document.getElementById(id);

  /** An element with attributes and children (strings become text nodes). */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "text") node.textContent = String(v);
      else if (k === "onclick") node.addEventListener("click", v);
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children.flat()) {
      if (c === undefined || c === null || c === false) continue;
      node.append(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
    }
    return node;
  }

  /** Appends the children that are there (null and false are left out). */
  const put = (node, ...children) => { node.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false)); return node; };
  const json = (v) => JSON.stringify(v, null, 2);
  const clear = (node) => { while (node.firstChild) node.removeChild(node.firstChild); return node; };
  const isHttpUrl = (u) => { try { const p = new URL(u); return p.protocol === "http:" || p.protocol === "https:"; } catch { return false; } };
  /** An icon's source that may be shown: an http(s) URL, or a data: URL of an image type. */
  const isIconSrc = (u) => typeof u === "string" && (isHttpUrl(u) || /^data:image\/[a-z0-9.+-]+[;,]/i.test(u));
  /** The icons of an item (tool), as <img alt=""> (decorative: the name is beside them),
   *  at most three, only from sources that may be shown; anything else is left out. */
  const icons = (item) => (Array.isArray(item && item.icons) ? item.icons : [])
    .filter((i) => i && isIconSrc(i.src)).slice(0, 3)
    .map((i) => el("img", { class: "icon", src: i.src, alt: "", referrerpolicy: "no-referrer", loading: "lazy" }));
  let nextId = 1;
  const newId = () => "p" + (nextId++) + "-" + Date.now().toString(36);

  // ---- the API ----
  async function api(method, path, body) {
    const init = { method, headers: { Authorization: "Bearer " + token } };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await fetch(path, init);
    let data = null;
    try { data = await response.json(); } catch { data = null; }
    if (!response.ok) {
      const message = (data && data.error) || ("HTTP " + response.status);
      throw new Error(typeof message === "string" ? message : JSON.stringify(message));
    }
    return data;
  }

  /** One MCP request through the inspector: {ok, result | error, durationMs}. */
  function request(method, params, extra) {
    return api("POST", "/api/request", Object.assign({ id: newId(), method, params }, extra || {}));
  }

  function errorText(answer) {
    const e = answer && answer.error;
    if (!e) return "failed";
    return typeof e === "string" ? e : (e.message || JSON.stringify(e));
  }

  // ---- state ----
  let connection = null;
  let initialTarget = null;
  const status = $("status");

  function showConnection(c) {
    connection = c;
    $("server").hidden = !c;
    if (!c) {
      status.textContent = "Not connected";
      return;
    }
    const info = c.serverInfo || {};
    status.textContent = "Connected to " + (info.name || c.target) + " — " + c.era + " " + c.protocolVersion;
    $("server-name").textContent = (info.name || "(unnamed)") + (info.version ? " " + info.version : "");
    $("server-transport").textContent = c.transport;
    $("server-era").textContent = c.era;
    $("revision").textContent = c.protocolVersion;
    $("capabilities").textContent = json(c.capabilities || {});
    $("instructions").textContent = c.instructions || "(none)";
    $("export").textContent = json(c.serverEntry || {});
  }

  async function connect() {
    $("connect-error").textContent = "";
    const headers = $("headers").value.split("\n").map((l) => l.trim()).filter(Boolean).map((l) => {
      const i = l.indexOf(":");
      return i > 0 ? { name: l.slice(0, i).trim(), value: l.slice(i + 1).trim() } : { name: l, value: "" };
    });
    const timeout = parseInt($("timeout").value, 10);
    status.textContent = "Connecting…";
    try {
      const typed = $("target").value.trim();
      const c = await api("POST", "/api/connect", {
        // The target the inspector was started with, as it was resolved (a configured name, say).
        target: typed === initialTarget && $("transport").value === "auto" ? undefined : typed,
        transport: $("transport").value,
        era: $("era").value,
        headers,
        timeoutMs: timeout > 0 ? timeout : undefined,
      });
      showConnection(c);
      resetLists();
      listTools();
    } catch (e) {
      showConnection(null);
      $("connect-error").textContent = e.message;
    }
    $("authorize").hidden = true;
  }

  $("connect-form").addEventListener("submit", (ev) => { ev.preventDefault(); connect(); });
  $("disconnect").addEventListener("click", async () => {
    try { await api("POST", "/api/disconnect"); } catch (e) { $("connect-error").textContent = e.message; }
    showConnection(null);
  });
  $("copy-export").addEventListener("click", async () => {
    try { await navigator.clipboard.writeText($("export").textContent); } catch { /* the text is shown anyway */ }
  });
  $("save-roots").addEventListener("click", async () => {
    const roots = $("roots").value.split("\n").map((l) => l.trim()).filter(Boolean).map((uri) => ({ uri }));
    try {
      const r = await api("PUT", "/api/roots", { roots });
      $("roots-status").textContent = "Saved " + roots.length + " root(s)" + (r.notified ? "; the server was told" : "");
    } catch (e) {
      $("roots-status").textContent = e.message;
    }
  });

  // ---- tabs ----
  const tabs = Array.from(document.querySelectorAll("[role=tab]"));
  function selectTab(tab) {
    for (const t of tabs) {
      const selected = t === tab;
      t.setAttribute("aria-selected", String(selected));
      t.tabIndex = selected ? 0 : -1;
      $(t.getAttribute("aria-controls")).hidden = !selected;
    }
  }
  tabs.forEach((tab, i) => {
    tab.addEventListener("click", () => selectTab(tab));
    tab.addEventListener("keydown", (ev) => {
      const next = ev.key === "ArrowRight" ? 1 : ev.key === "ArrowLeft" ? -1 : 0;
      if (next) {
        const t = tabs[(i + next + tabs.length) % tabs.length];
        selectTab(t);
        t.focus();
      }
    });
  });

  function resetLists() {
    teardown("the connection changed");
    for (const id of ["tools", "apps", "resources", "templates", "prompts", "tasks"]) clear($(id));
    for (const id of ["tool-detail", "app-detail", "resource-detail", "prompt-detail", "task-detail"]) clear($(id));
  }

  function selectItem(list, button) {
    for (const b of list.querySelectorAll("button.item")) b.setAttribute("aria-current", String(b === button));
  }

  // ---- rendering of results ----
  const MEDIA = /^[a-z]+\/[a-z0-9.+-]+$/i;
  const BASE64 = /^[A-Za-z0-9+/=\s]*$/;

  function link(uri, text) {
    return isHttpUrl(uri) ? el("a", { href: uri, rel: "noopener noreferrer", target: "_blank", text: text || uri }) : el("code", { text: text || uri });
  }

  function renderResourceContents(r) {
    const box = el("div", { class: "block" }, el("div", {}, "Resource ", link(String(r.uri || "")), r.mimeType ? el("span", { class: "badge", text: r.mimeType }) : null));
    if (typeof r.text === "string") put(box, el("pre", { text: r.text }));
    else if (typeof r.blob === "string") {
      const mime = String(r.mimeType || "");
      if (mime.startsWith("image/") && MEDIA.test(mime) && BASE64.test(r.blob)) put(box, el("img", { src: "data:" + mime + ";base64," + r.blob, alt: "image " + (r.uri || "") }));
      else put(box, el("p", { class: "muted", text: "(binary, " + Math.floor(r.blob.length * 3 / 4) + " bytes)" }));
    }
    return box;
  }

  function renderBlock(b) {
    if (!b || typeof b !== "object") return el("pre", { text: json(b) });
    const mime = String(b.mimeType || "");
    switch (b.type) {
      case "text":
        return el("div", { class: "block" }, el("pre", { text: String(b.text) }));
      case "image":
        if (mime.startsWith("image/") && MEDIA.test(mime) && typeof b.data === "string" && BASE64.test(b.data))
          return el("div", { class: "block" }, el("img", { src: "data:" + mime + ";base64," + b.data, alt: "image (" + mime + ")" }));
        return el("div", { class: "block muted", text: "(an image that cannot be shown: " + mime + ")" });
      case "audio":
        if (mime.startsWith("audio/") && MEDIA.test(mime) && typeof b.data === "string" && BASE64.test(b.data))
          return el("div", { class: "block" }, el("audio", { controls: true, src: "data:" + mime + ";base64," + b.data, "aria-label": "audio (" + mime + ")" }));
        return el("div", { class: "block muted", text: "(audio that cannot be played: " + mime + ")" });
      case "resource_link":
        return el("div", { class: "block" }, "Link: ", link(String(b.uri || ""), String(b.name || b.uri || "")), b.description ? el("p", { class: "muted", text: b.description }) : null);
      case "resource":
        return renderResourceContents(b.resource || {});
      default:
        return el("div", { class: "block" }, el("pre", { text: json(b) }));
    }
  }

  function renderToolResult(target, answer) {
    clear(target);
    const meta = el("p", { class: "muted" }, "Took " + answer.durationMs.toFixed(1) + " ms");
    put(target, meta);
    if (!answer.ok) {
      put(target, el("p", { class: "error", role: "alert", text: "Error: " + errorText(answer) }));
      return;
    }
    const r = answer.result || {};
    if (r.task) {
      rememberTask(r.task);
      put(target, el("p", { text: "Running as task " + r.task.taskId + " (" + r.task.status + ")" }), el("pre", { text: json(r.task) }));
      return;
    }
    if (r.isError) put(target, el("p", { class: "error", role: "alert", text: "The tool reported an error (isError)" }));
    for (const b of r.content || []) put(target, renderBlock(b));
    if (r.structuredContent !== undefined || answer.outputCheck) {
      put(target, el("h4", { text: "Structured content" }));
      const check = answer.outputCheck;
      if (check) {
        put(target, el("p", {
          class: "output-check " + (check.valid ? "ok" : "error"),
          text: check.valid ? "Valid against the tool's output schema" : "Does not match the tool's output schema",
        }));
        if (!check.valid) put(target, el("ul", { class: "output-errors error" }, ...(check.errors || []).map((e) => el("li", { text: String(e) }))));
      }
      if (r.structuredContent !== undefined) put(target, el("pre", { text: json(r.structuredContent) }));
    }
  }

  // ---- forms from JSON Schema ----
  let fieldSeq = 0;

  /** Builds inputs for an object schema; returns {node, read()} where read() gives the values or throws. */
  function schemaForm(schema, prefix) {
    const props = (schema && schema.properties) || {};
    const required = new Set((schema && schema.required) || []);
    const wrap = el("div", { class: "form" });
    const readers = [];
    const inputs = {};
    for (const [name, prop0] of Object.entries(props)) {
      const prop = prop0 || {};
      const id = prefix + "-" + (fieldSeq++);
      const label = el("label", { for: id, text: name });
      const mark = required.has(name) ? el("span", { class: "required", "aria-hidden": "true", text: "*" }) : null;
      const type = Array.isArray(prop.type) ? prop.type.find((t) => t !== "null") : prop.type;
      const options = prop.enum || (prop.oneOf && prop.oneOf.every((o) => "const" in o) ? prop.oneOf.map((o) => o.const) : null);
      let input, read;
      const def = prop.default;
      if (options) {
        input = el("select", { id, name });
        if (!required.has(name) || def === undefined) input.append(el("option", { value: "", text: "" }));
        options.forEach((o, i) => input.append(el("option", { value: String(i), text: String(o) })));
        if (def !== undefined) { const i = options.indexOf(def); if (i >= 0) input.value = String(i); }
        read = () => (input.value === "" ? undefined : options[parseInt(input.value, 10)]);
      } else if (type === "boolean") {
        input = el("input", { id, name, type: "checkbox" });
        input.checked = def === true;
        read = () => input.checked;
      } else if (type === "number" || type === "integer") {
        input = el("input", { id, name, type: "number", step: type === "integer" ? "1" : "any" });
        if (typeof def === "number") input.value = String(def);
        read = () => {
          if (input.value.trim() === "") return undefined;
          const n = Number(input.value);
          if (!Number.isFinite(n) || (type === "integer" && !Number.isInteger(n))) throw new Error(name + ": expected " + (type === "integer" ? "an integer" : "a number"));
          return n;
        };
      } else if (type === "string") {
        input = el("input", { id, name, type: "text", autocomplete: "off" });
        if (typeof def === "string") input.value = def;
        read = () => (input.value === "" && !required.has(name) ? undefined : input.value);
      } else {
        // Arrays, objects and anything else: raw JSON.
        input = el("textarea", { id, name, rows: "3", spellcheck: "false", placeholder: type === "array" ? "[ … ] (JSON)" : "JSON" });
        if (def !== undefined) input.value = JSON.stringify(def);
        read = () => {
          if (input.value.trim() === "") return undefined;
          try { return JSON.parse(input.value); } catch (e) { throw new Error(name + ": not valid JSON (" + e.message + ")"); }
        };
      }
      if (required.has(name)) input.setAttribute("aria-required", "true");
      const help = prop.description ? el("small", { class: "muted", text: prop.description }) : null;
      wrap.append(el("div", { class: "field" }, el("span", {}, label, mark, type ? el("span", { class: "badge", text: type }) : null), input, help));
      readers.push([name, read]);
      inputs[name] = input;
    }
    return {
      node: wrap,
      inputs,
      read() {
        const out = {};
        for (const [name, read] of readers) {
          const v = read();
          if (v !== undefined) out[name] = v;
          else if (required.has(name)) throw new Error(name + " is required");
        }
        return out;
      },
    };
  }

  // ---- completions ----
  let completionSeq = 0;

  /** Offers the server's completions (completion/complete, debounced) for the text inputs of
   *  `form` in a <datalist>, when the server declares the completions capability; `ref` is
   *  the prompt's or the template's reference. */
  function offerCompletions(form, ref) {
    if (!connection || !connection.capabilities || !connection.capabilities.completions) return;
    for (const [name, input] of Object.entries(form.inputs)) {
      if (input.tagName !== "INPUT" || input.type !== "text") continue;
      const list = el("datalist", { id: "complete-" + (completionSeq++) });
      input.setAttribute("list", list.id);
      input.after(list);
      let timer = null;
      let asked = 0;
      input.addEventListener("input", () => {
        clearTimeout(timer);
        timer = setTimeout(async () => {
          const mine = ++asked;
          const others = {};
          for (const [n, i] of Object.entries(form.inputs)) if (n !== name && typeof i.value === "string" && i.value !== "") others[n] = i.value;
          const params = { ref, argument: { name, value: input.value } };
          if (Object.keys(others).length) params.context = { arguments: others };
          const answer = await request("completion/complete", params).catch(() => null);
          if (mine !== asked || !answer || !answer.ok) return;
          const values = ((answer.result && answer.result.completion && answer.result.completion.values) || []).slice(0, 100);
          clear(list);
          for (const v of values) if (typeof v === "string") list.append(el("option", { value: v }));
        }, 250);
      });
    }
  }

  // ---- tools ----
  let tools = [];
  let toolsAsked = 0;
  async function listTools() {
    // Lists asked for at once (at connect, on list_changed, by the button): the last one wins.
    const mine = ++toolsAsked;
    const answer = await request("tools/list", {}).catch((e) => ({ ok: false, error: e.message }));
    if (mine !== toolsAsked) return;
    const list = clear($("tools"));
    if (!answer.ok) { list.append(el("li", { class: "error", text: errorText(answer) })); clear($("apps")); return; }
    tools = answer.result.tools || [];
    for (const tool of tools) {
      const button = el("button", { type: "button", class: "item", text: tool.name });
      button.addEventListener("click", () => { selectItem(list, button); showTool(tool); });
      const a = tool.annotations || {};
      const badges = [];
      if (a.readOnlyHint) badges.push("read-only");
      if (a.destructiveHint) badges.push("destructive");
      if (a.idempotentHint) badges.push("idempotent");
      if (a.openWorldHint) badges.push("open world");
      if (tool.execution && tool.execution.taskSupport && tool.execution.taskSupport !== "forbidden") badges.push("task: " + tool.execution.taskSupport);
      if (appUri(tool)) badges.push("app");
      list.append(el("li", {}, icons(tool), button, badges.map((b) => el("span", { class: "badge", text: b }))));
    }
    if (!tools.length) list.append(el("li", { class: "muted", text: "(no tools)" }));
    showAppTools();
  }
  $("list-tools").addEventListener("click", listTools);

  let currentCall = null;
  function showTool(tool) {
    const detail = clear($("tool-detail"));
    const title = tool.title || (tool.annotations && typeof tool.annotations.title === "string" ? tool.annotations.title : "");
    const form = schemaForm(tool.inputSchema || {}, "arg");
    const result = el("div", { id: "tool-result", role: "region", "aria-label": "Result" });
    const progress = el("div", { id: "tool-progress", role: "status" });
    const asTask = el("input", { type: "checkbox", id: "as-task" });
    const call = el("button", { type: "button", text: "Call" });
    const cancel = el("button", { type: "button", text: "Cancel", disabled: true });
    const error = el("p", { class: "error", role: "alert" });
    put(detail,
      el("h3", {}, icons(tool), title ? title + " (" + tool.name + ")" : tool.name),
      tool.description ? el("p", { text: tool.description }) : null,
      tool.annotations ? el("details", {}, el("summary", { text: "Annotations" }), el("pre", { text: json(tool.annotations) })) : null,
      el("details", {}, el("summary", { text: "Input schema" }), el("pre", { text: json(tool.inputSchema || {}) })),
      form.node,
      el("div", { class: "field" }, el("span", {}, asTask, " ", el("label", { for: "as-task", text: "Run as a task" }))),
      el("div", { class: "buttons" }, call, cancel),
      error, progress, result,
    );
    call.addEventListener("click", async () => {
      error.textContent = "";
      let args;
      try { args = form.read(); } catch (e) { error.textContent = e.message; return; }
      const id = newId();
      currentCall = id;
      call.disabled = true;
      cancel.disabled = false;
      clear(result);
      progress.textContent = "Running…";
      cancel.onclick = () => api("POST", "/api/cancel", { id }).catch(() => {});
      try {
        const answer = await api("POST", "/api/request", { id, method: "tools/call", params: { name: tool.name, arguments: args }, task: asTask.checked });
        renderToolResult(result, answer);
      } catch (e) {
        error.textContent = e.message;
      } finally {
        if (currentCall === id) currentCall = null;
        call.disabled = false;
        cancel.disabled = true;
        progress.textContent = "";
      }
    });
  }

  function onProgress(data) {
    if (!currentCall || data.requestId !== currentCall) return;
    const p = data.params || {};
    const node = $("tool-progress");
    if (!node) return;
    clear(node);
    const bar = el("progress", { max: p.total || 100, value: p.progress || 0, "aria-label": "Progress" });
    node.append(bar, " " + (p.progress || 0) + (p.total ? " / " + p.total : "") + (p.message ? " — " + p.message : ""));
  }

  // ---- MCP Apps: the inspector as a host ----
  // An app tool's interface (its ui:// resource) is rendered in <iframe sandbox="allow-scripts">
  // loaded from the inspector's /apps/frame/… (served with the CSP the inspector built from the
  // resource's _meta.ui.csp, every origin checked): without allow-same-origin the app runs in an
  // opaque origin and cannot reach this page's token. The page is the app's host: JSON-RPC 2.0
  // over postMessage, only with that frame's window; what the app sends is shown as text only.
  const APP_PROTOCOL = "2026-01-26";
  const APP_MIME = "text/html;profile=mcp-app";
  let inspectorVersion = "";
  let view = null;

  /** The ui:// resource of an app tool (_meta.ui.resourceUri, or the deprecated flat key), or null. */
  function appUri(tool) {
    const meta = tool && tool._meta;
    if (!meta || typeof meta !== "object") return null;
    const nested = meta.ui && typeof meta.ui === "object" ? meta.ui.resourceUri : undefined;
    const uri = typeof nested === "string" ? nested : meta["ui/resourceUri"];
    return typeof uri === "string" && uri.startsWith("ui://") ? uri : null;
  }
  /** Who may call a tool (_meta.ui.visibility; the model and the app when not said). */
  function appVisibility(tool) {
    const v = tool && tool._meta && tool._meta.ui && tool._meta.ui.visibility;
    return Array.isArray(v) ? v.filter((x) => typeof x === "string") : ["model", "app"];
  }
  const safeJson = (v) => { try { return JSON.stringify(v); } catch { return String(v); } };

  function showAppTools() {
    const list = clear($("apps"));
    const apps = tools.filter(appUri);
    for (const tool of apps) {
      const button = el("button", { type: "button", class: "item", text: tool.name });
      button.addEventListener("click", () => { selectItem(list, button); showApp(tool); });
      const onlyApp = !appVisibility(tool).includes("model");
      list.append(el("li", {}, icons(tool), button, onlyApp ? el("span", { class: "badge", text: "app only" }) : null,
        el("div", { class: "muted", text: appUri(tool) })));
    }
    if (!apps.length) list.append(el("li", { class: "muted", text: "(no app tools)" }));
  }
  $("list-apps").addEventListener("click", listTools);

  /** Logs a message exchanged with the app (as text). */
  function appLog(v, dir, message) {
    const text = typeof message === "string" ? message : json(message);
    v.ui.log.append(el("li", {}, el("span", { class: "muted", text: dir === "out" ? "→ to the app " : "← from the app " }), el("pre", { text })));
    while (v.ui.log.children.length > 500) v.ui.log.removeChild(v.ui.log.firstChild);
  }
  /** A note for the user about what the app asked (its words as text). */
  function appNote(v, ...children) {
    v.ui.notes.append(el("li", {}, ...children));
  }
  function toApp(v, message) {
    const target = v.frame && v.frame.contentWindow;
    if (!target) return;
    const full = Object.assign({ jsonrpc: "2.0" }, message);
    appLog(v, "out", full);
    // The frame's origin is opaque ("null"): "*" is the only target origin that reaches it;
    // the window is the frame's own.
    target.postMessage(full, "*");
  }

  async function teardown(reason) {
    const v = view;
    if (!v) return;
    if (v.frame && v.initialized && v.frame.contentWindow) {
      const id = v.nextId++;
      await new Promise((resolve) => {
        v.pending.set(id, resolve);
        toApp(v, { id, method: "ui/resource-teardown", params: { reason } });
        setTimeout(resolve, 1000);
      });
    }
    if (view === v) view = null;
    if (v.frame) v.frame.remove();
  }

  async function showApp(tool) {
    await teardown("another app was chosen");
    const detail = clear($("app-detail"));
    const uri = appUri(tool);
    const title = tool.title || (tool.annotations && typeof tool.annotations.title === "string" ? tool.annotations.title : "");
    const form = schemaForm(tool.inputSchema || {}, "apparg");
    const call = el("button", { type: "button", text: "Call" });
    const error = el("p", { class: "error", role: "alert" });
    const ui = {
      info: el("div", { id: "app-info" }),
      holder: el("div", { id: "app-frame-holder" }),
      result: el("div", { id: "app-result", role: "region", "aria-label": "Result" }),
      notes: el("ul", { id: "app-notes", "aria-label": "What the app asked" }),
      log: el("ol", { id: "app-log", "aria-label": "Messages with the app" }),
    };
    put(detail,
      el("h3", {}, icons(tool), title ? title + " (" + tool.name + ")" : tool.name),
      tool.description ? el("p", { text: tool.description }) : null,
      el("p", {}, "Interface: ", el("code", { text: uri })),
      form.node, el("div", { class: "buttons" }, call), error,
      ui.info, ui.holder, ui.notes,
      el("h4", { text: "Result" }), ui.result,
      el("details", {}, el("summary", { text: "Messages with the app" }), ui.log),
    );
    call.addEventListener("click", async () => {
      error.textContent = "";
      let args;
      try { args = form.read(); } catch (e) { error.textContent = e.message; return; }
      call.disabled = true;
      try { await runApp(tool, uri, args, ui); } catch (e) { error.textContent = e.message; } finally { call.disabled = false; }
    });
  }

  /** Calls an app tool and renders its interface, as a host: the call and the read at once. */
  async function runApp(tool, uri, args, ui) {
    await teardown("the tool was called again");
    for (const node of Object.values(ui)) clear(node);
    const v = { tool, args, ui, frame: null, initialized: false, answer: undefined, delivered: false, pending: new Map(), nextId: 1, granted: {} };
    view = v;
    const calling = request("tools/call", { name: tool.name, arguments: args }).catch((e) => ({ ok: false, error: e.message, durationMs: 0 }));
    const read = await request("resources/read", { uri }).catch((e) => ({ ok: false, error: e.message }));
    if (view !== v) return;
    if (!read.ok) throw new Error("cannot read " + uri + ": " + errorText(read));
    const item = ((read.result && read.result.contents) || []).find((c) => c && (typeof c.text === "string" || typeof c.blob === "string"));
    if (!item) throw new Error(uri + " has no text or blob content");
    let html = item.text;
    if (typeof html !== "string") {
      try { html = new TextDecoder().decode(Uint8Array.from(atob(item.blob), (c) => c.charCodeAt(0))); } catch { throw new Error(uri + ": its blob is not base64"); }
    }
    const meta = item._meta && typeof item._meta === "object" ? item._meta.ui : undefined;
    const frame = await api("POST", "/api/apps/frame", { html, ui: meta && typeof meta === "object" ? meta : undefined });
    if (view !== v) return;
    v.granted = { permissions: frame.permissions || {}, csp: frame.approved || {} };
    put(ui.info,
      item.mimeType !== APP_MIME ? el("p", { class: "error", text: "The resource's MIME type is " + JSON.stringify(item.mimeType) + ", not " + APP_MIME }) : null,
      el("details", {}, el("summary", { text: "Content-Security-Policy of the frame" }), el("pre", { id: "app-csp", text: frame.csp })),
      frame.allow ? el("p", {}, "Permissions granted: ", el("code", { text: frame.allow })) : null,
      (frame.dropped || []).length ? el("ul", { id: "app-dropped", class: "error", "aria-label": "Left out of the policy" },
        frame.dropped.map((d) => el("li", { text: "Left out (" + d.list + "): " + safeJson(d.value) + " — " + d.reason }))) : null,
    );
    const border = !(meta && meta.prefersBorder === false);
    const iframe = el("iframe", {
      sandbox: "allow-scripts",
      src: frame.url,
      title: "App: " + (tool.title || tool.name),
      referrerpolicy: "no-referrer",
      allow: frame.allow || undefined,
      class: "app-frame" + (border ? " bordered" : ""),
    });
    v.frame = iframe;
    ui.holder.append(iframe);
    const answer = await calling;
    if (view !== v) return;
    renderToolResult(ui.result, answer);
    v.answer = answer;
    deliver(v);
  }

  /** Once the app is initialized and the call has ended: its result (or its cancellation). */
  function deliver(v) {
    if (!v.initialized || v.answer === undefined || v.delivered) return;
    v.delivered = true;
    if (v.answer.ok && !(v.answer.result && v.answer.result.task)) toApp(v, { method: "ui/notifications/tool-result", params: v.answer.result });
    else toApp(v, { method: "ui/notifications/tool-cancelled", params: { reason: v.answer.ok ? "the call runs as a task" : errorText(v.answer) } });
  }

  function hostInitialize(v) {
    return {
      protocolVersion: APP_PROTOCOL,
      hostInfo: { name: "mcpwire-inspector", version: inspectorVersion || "0" },
      hostCapabilities: {
        serverTools: {},
        serverResources: {},
        logging: {},
        sandbox: { permissions: v.granted.permissions, csp: v.granted.csp },
      },
      hostContext: {
        toolInfo: { tool: v.tool },
        theme: window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light",
        displayMode: "inline",
        availableDisplayModes: ["inline"],
        containerDimensions: { maxHeight: 2000 },
        locale: navigator.language,
        timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
        userAgent: "mcpwire-inspector",
        platform: "web",
      },
    };
  }

  /** The JSON-RPC error of a failed /api/request answer. */
  function rpcError(answer) {
    const e = answer && answer.error;
    if (e && typeof e === "object") return { code: typeof e.code === "number" ? e.code : -32603, message: String(e.serverMessage || e.message || "failed") };
    return { code: -32603, message: typeof e === "string" ? e : "failed" };
  }

  async function onAppRequest(v, m) {
    const reply = (result) => { if (view === v) toApp(v, { id: m.id, result }); };
    const fail = (code, message) => { if (view === v) toApp(v, { id: m.id, error: { code, message } }); };
    const p = m.params && typeof m.params === "object" ? m.params : {};
    switch (m.method) {
      case "ui/initialize":
        return reply(hostInitialize(v));
      case "ping":
        return reply({});
      case "tools/call": {
        const name = typeof p.name === "string" ? p.name : "";
        const listed = tools.find((t) => t.name === name);
        if (!listed) return fail(-32602, "no tool " + safeJson(name) + " on this server (as last listed)");
        if (!appVisibility(listed).includes("app")) return fail(-32600, "the tool " + name + " may not be called by apps (its visibility)");
        const args = p.arguments && typeof p.arguments === "object" && !Array.isArray(p.arguments) ? p.arguments : {};
        const answer = await request("tools/call", { name, arguments: args }, { id: "app-" + newId() }).catch((e) => ({ ok: false, error: e.message }));
        return answer.ok ? reply(answer.result) : fail(rpcError(answer).code, rpcError(answer).message);
      }
      case "resources/read": {
        const uri = typeof p.uri === "string" ? p.uri : "";
        const answer = await request("resources/read", { uri }, { id: "app-" + newId() }).catch((e) => ({ ok: false, error: e.message }));
        return answer.ok ? reply(answer.result) : fail(rpcError(answer).code, rpcError(answer).message);
      }
      case "ui/open-link": {
        const url = typeof p.url === "string" ? p.url : "";
        appNote(v, "The app asks to open ", isHttpUrl(url) ? link(url) : el("code", { text: url }), " (not opened by the inspector)");
        return fail(-32000, "the inspector does not open links for apps; the link is shown to the user");
      }
      case "ui/message":
        appNote(v, "The app sends a message: ", el("code", { text: safeJson(p) }));
        return fail(-32000, "the inspector has no conversation to add a message to");
      case "ui/update-model-context":
        appNote(v, "The app updates the model context: ", el("code", { text: safeJson(p) }));
        return reply({});
      case "ui/request-display-mode":
        return reply({ mode: "inline" });
      default:
        return fail(-32601, "Method not found: " + m.method);
    }
  }

  function onAppNotification(v, m) {
    const p = m.params && typeof m.params === "object" ? m.params : {};
    switch (m.method) {
      case "ui/notifications/initialized":
        if (v.initialized) return;
        v.initialized = true;
        toApp(v, { method: "ui/notifications/tool-input", params: { arguments: v.args } });
        deliver(v);
        break;
      case "ui/notifications/size-changed":
        if (typeof p.height === "number" && Number.isFinite(p.height) && v.frame) v.frame.style.height = Math.min(Math.max(Math.round(p.height), 40), 2000) + "px";
        break;
      case "notifications/message":
        appNote(v, el("span", { class: "badge", text: String(p.level) }), " " + (typeof p.data === "string" ? p.data : safeJson(p.data)));
        break;
      default:
        // Logged with the messages; nothing else to do.
        break;
    }
  }

  window.addEventListener("message", (event) => {
    const v = view;
    // Only the frame of the app shown; anything else is ignored.
    if (!v || !v.frame || !event.source || event.source !== v.frame.contentWindow) return;
    const m = event.data;
    if (!m || typeof m !== "object" || m.jsonrpc !== "2.0") { appLog(v, "in", "(not JSON-RPC 2.0) " + safeJson(m)); return; }
    appLog(v, "in", m);
    const hasId = m.id !== undefined && m.id !== null;
    if (typeof m.method === "string") {
      if (hasId) onAppRequest(v, m);
      else onAppNotification(v, m);
    } else if (hasId && v.pending.has(m.id)) {
      const done = v.pending.get(m.id);
      v.pending.delete(m.id);
      done(m);
    }
  });

  // ---- resources ----
  async function listResources() {
    const list = clear($("resources"));
    const tlist = clear($("templates"));
    const [r, t] = await Promise.all([
      request("resources/list", {}).catch((e) => ({ ok: false, error: e.message })),
      request("resources/templates/list", {}).catch((e) => ({ ok: false, error: e.message })),
    ]);
    if (!r.ok) list.append(el("li", { class: "error", text: errorText(r) }));
    else {
      for (const res of r.result.resources || []) {
        const button = el("button", { type: "button", class: "item", text: res.name || res.uri });
        button.addEventListener("click", () => { selectItem(list, button); showResource(res); });
        list.append(el("li", {}, button, el("span", { class: "muted", text: " " + res.uri })));
      }
      if (!(r.result.resources || []).length) list.append(el("li", { class: "muted", text: "(no resources)" }));
    }
    if (!t.ok) tlist.append(el("li", { class: "error", text: errorText(t) }));
    else {
      for (const tpl of t.result.resourceTemplates || []) {
        const button = el("button", { type: "button", class: "item", text: tpl.uriTemplate });
        button.addEventListener("click", () => { selectItem(tlist, button); showTemplate(tpl); });
        tlist.append(el("li", {}, button));
      }
    }
  }
  $("list-resources").addEventListener("click", listResources);

  async function read(uri, result) {
    clear(result);
    const answer = await request("resources/read", { uri }).catch((e) => ({ ok: false, error: e.message, durationMs: 0 }));
    put(result, el("p", { class: "muted", text: "Read " + uri + " in " + (answer.durationMs || 0).toFixed(1) + " ms" }));
    if (!answer.ok) { put(result, el("p", { class: "error", role: "alert", text: "Error: " + errorText(answer) })); return; }
    for (const c of answer.result.contents || []) put(result, renderResourceContents(c));
  }

  const subscribed = new Set();
  function showResource(res) {
    const detail = clear($("resource-detail"));
    const result = el("div", { id: "resource-result", role: "region", "aria-label": "Contents" });
    const note = el("p", { role: "status", id: "resource-note" });
    const readButton = el("button", { type: "button", text: "Read" });
    const sub = el("button", { type: "button", text: subscribed.has(res.uri) ? "Unsubscribe" : "Subscribe" });
    readButton.addEventListener("click", () => read(res.uri, result));
    sub.addEventListener("click", async () => {
      const on = !subscribed.has(res.uri);
      const answer = await request(on ? "resources/subscribe" : "resources/unsubscribe", { uri: res.uri }).catch((e) => ({ ok: false, error: e.message }));
      if (!answer.ok) { note.textContent = "Error: " + errorText(answer); return; }
      if (on) subscribed.add(res.uri); else subscribed.delete(res.uri);
      sub.textContent = on ? "Unsubscribe" : "Subscribe";
      const how = answer.result && answer.result.listen ? " (subscriptions/listen)" : "";
      note.textContent = on ? "Subscribed to " + res.uri + how : "Unsubscribed";
    });
    put(detail,
      el("h3", { text: res.title || res.name || res.uri }),
      el("p", {}, el("code", { text: res.uri }), res.mimeType ? el("span", { class: "badge", text: res.mimeType }) : null),
      res.description ? el("p", { text: res.description }) : null,
      el("div", { class: "buttons" }, readButton, sub),
      note, result,
    );
  }

  function templateVariables(template) {
    const names = [];
    for (const m of template.matchAll(/\{([^}]+)\}/g)) {
      for (const part of m[1].replace(/^[+#./;?&]/, "").split(",")) {
        const name = part.replace(/\*$/, "").replace(/:\d+$/, "");
        if (name && !names.includes(name)) names.push(name);
      }
    }
    return names;
  }

  function expandTemplate(template, values) {
    return template.replace(/\{([^}]+)\}/g, (_, expr) => {
      const op = /^[+#./;?&]/.test(expr) ? expr[0] : "";
      const names = (op ? expr.slice(1) : expr).split(",").map((n) => n.replace(/\*$/, "").replace(/:\d+$/, ""));
      const enc = (v) => (op === "+" || op === "#" ? encodeURI(v) : encodeURIComponent(v));
      const parts = names.map((n) => (op === "?" || op === "&" || op === ";" ? n + "=" : "") + enc(values[n] || ""));
      const sep = { "": ",", "+": ",", "#": ",", ".": ".", "/": "/", ";": ";", "?": "&", "&": "&" }[op];
      const first = { "": "", "+": "", "#": "#", ".": ".", "/": "/", ";": ";", "?": "?", "&": "&" }[op];
      return first + parts.join(sep);
    });
  }

  function showTemplate(tpl) {
    const detail = clear($("resource-detail"));
    const vars = templateVariables(tpl.uriTemplate);
    const schema = { type: "object", properties: Object.fromEntries(vars.map((v) => [v, { type: "string" }])), required: vars };
    const form = schemaForm(schema, "var");
    const result = el("div", { id: "resource-result", role: "region", "aria-label": "Contents" });
    const error = el("p", { class: "error", role: "alert" });
    const readButton = el("button", { type: "button", text: "Read" });
    readButton.addEventListener("click", () => {
      error.textContent = "";
      let values;
      try { values = form.read(); } catch (e) { error.textContent = e.message; return; }
      read(expandTemplate(tpl.uriTemplate, values), result);
    });
    put(detail,
      el("h3", { text: tpl.title || tpl.name || tpl.uriTemplate }),
      el("p", {}, el("code", { text: tpl.uriTemplate })),
      tpl.description ? el("p", { text: tpl.description }) : null,
      form.node, el("div", { class: "buttons" }, readButton), error, result,
    );
    offerCompletions(form, { type: "ref/resource", uri: tpl.uriTemplate });
  }

  // ---- prompts ----
  async function listPrompts() {
    const list = clear($("prompts"));
    const answer = await request("prompts/list", {}).catch((e) => ({ ok: false, error: e.message }));
    if (!answer.ok) { list.append(el("li", { class: "error", text: errorText(answer) })); return; }
    for (const prompt of answer.result.prompts || []) {
      const button = el("button", { type: "button", class: "item", text: prompt.name });
      button.addEventListener("click", () => { selectItem(list, button); showPrompt(prompt); });
      list.append(el("li", {}, button));
    }
    if (!(answer.result.prompts || []).length) list.append(el("li", { class: "muted", text: "(no prompts)" }));
  }
  $("list-prompts").addEventListener("click", listPrompts);

  function showPrompt(prompt) {
    const detail = clear($("prompt-detail"));
    const args = prompt.arguments || [];
    const schema = {
      type: "object",
      properties: Object.fromEntries(args.map((a) => [a.name, { type: "string", description: a.description }])),
      required: args.filter((a) => a.required).map((a) => a.name),
    };
    const form = schemaForm(schema, "parg");
    const result = el("div", { id: "prompt-result", role: "region", "aria-label": "Messages" });
    const error = el("p", { class: "error", role: "alert" });
    const getButton = el("button", { type: "button", text: "Get" });
    getButton.addEventListener("click", async () => {
      error.textContent = "";
      let values;
      try { values = form.read(); } catch (e) { error.textContent = e.message; return; }
      clear(result);
      const answer = await request("prompts/get", { name: prompt.name, arguments: values }).catch((e) => ({ ok: false, error: e.message }));
      if (!answer.ok) { put(result, el("p", { class: "error", role: "alert", text: "Error: " + errorText(answer) })); return; }
      const r = answer.result;
      if (r.description) put(result, el("p", { class: "muted", text: r.description }));
      for (const m of r.messages || []) {
        const blocks = Array.isArray(m.content) ? m.content : [m.content];
        put(result, el("div", { class: "message" }, el("h4", { text: String(m.role) }), blocks.map(renderBlock)));
      }
    });
    put(detail,
      el("h3", { text: prompt.title || prompt.name }),
      prompt.description ? el("p", { text: prompt.description }) : null,
      form.node, el("div", { class: "buttons" }, getButton), error, result,
    );
    offerCompletions(form, { type: "ref/prompt", name: prompt.name });
  }

  // ---- tasks ----
  // The tasks this page started (a 2026-07-28 server has no tasks/list).
  const knownTasks = new Map();
  function rememberTask(task) {
    if (task && task.taskId) knownTasks.set(task.taskId, task);
  }
  async function listTasks() {
    const list = clear($("tasks"));
    const answer = await request("tasks/list", {}).catch((e) => ({ ok: false, error: e.message }));
    const tasks = new Map(knownTasks);
    if (answer.ok) for (const t of answer.result.tasks || []) tasks.set(t.taskId, t);
    else if (!tasks.size) { list.append(el("li", { class: "error", text: errorText(answer) })); return; }
    for (const task of tasks.values()) {
      const show = async (method) => {
        const out = clear($("task-detail"));
        const r = await request(method, { taskId: task.taskId }).catch((e) => ({ ok: false, error: e.message }));
        out.append(el("h4", { text: method + " " + task.taskId }), r.ok ? el("pre", { text: json(r.result) }) : el("p", { class: "error", text: errorText(r) }));
      };
      list.append(el("li", {}, el("code", { text: task.taskId }), " ", el("span", { class: "badge", text: task.status }),
        el("button", { type: "button", class: "item", onclick: () => show("tasks/get") }, "Status"),
        el("button", { type: "button", class: "item", onclick: () => show("tasks/result") }, "Result"),
        el("button", { type: "button", class: "item", onclick: () => show("tasks/cancel") }, "Cancel task")));
    }
    if (!tasks.size) list.append(el("li", { class: "muted", text: "(no tasks)" }));
  }
  $("list-tasks").addEventListener("click", listTasks);

  // ---- logs and notifications ----
  const logs = $("logs");
  function logMatches(li) {
    const f = $("log-filter").value.trim().toLowerCase();
    return !f || li.textContent.toLowerCase().includes(f);
  }
  function onNotification(data) {
    const p = data.params || {};
    const time = new Date(data.time || Date.now()).toLocaleTimeString();
    let summary;
    if (data.method === "notifications/message") {
      summary = [el("span", { class: "badge", text: String(p.level) }), p.logger ? el("span", { class: "muted", text: " " + p.logger + ":" }) : null, " " + (typeof p.data === "string" ? p.data : JSON.stringify(p.data))];
    } else {
      summary = [" " + JSON.stringify(p)];
    }
    const li = el("li", {}, el("span", { class: "muted", text: time + " " }), el("code", { text: data.method }), summary);
    li.hidden = !logMatches(li);
    logs.append(li);
    while (logs.children.length > 2000) logs.removeChild(logs.firstChild);
    if (data.method === "notifications/resources/updated") {
      const note = $("resource-note");
      if (note) note.textContent = "Updated: " + (p.uri || "");
    }
    if (data.method === "notifications/tools/list_changed" && connection) listTools();
  }
  $("log-filter").addEventListener("input", () => { for (const li of logs.children) li.hidden = !logMatches(li); });
  $("clear-logs").addEventListener("click", () => clear(logs));
  $("set-level").addEventListener("click", async () => {
    const answer = await request("logging/setLevel", { level: $("log-level").value }).catch((e) => ({ ok: false, error: e.message }));
    const li = el("li", { class: answer.ok ? "muted" : "error", text: answer.ok ? "Log level set to " + $("log-level").value : "Error: " + errorText(answer) });
    logs.append(li);
  });

  // ---- history ----
  const historyItems = new Map();
  function onHistory(data) {
    if (data.phase === "request") {
      const replay = el("button", { type: "button", class: "item", text: "Replay" });
      const method = data.request.method;
      const params = data.request.params;
      replay.addEventListener("click", () => request(method, params).catch(() => {}));
      const state = el("span", { class: "badge", text: "pending" });
      const timing = el("span", { class: "muted" });
      const responsePre = el("pre", { text: "(waiting)" });
      const httpBox = el("div", { class: "http" });
      const fromApp = typeof data.id === "string" && data.id.startsWith("app-") ? el("span", { class: "badge", text: "from the app" }) : null;
      const li = el("li", {}, el("code", { text: method }), " ", fromApp, " ", state, " ", timing, " ", replay,
        el("details", {}, el("summary", { text: "Raw JSON-RPC" }), el("h4", { text: "Request" }), el("pre", { text: json(data.request) }), el("h4", { text: "Response" }), responsePre, httpBox));
      historyItems.set(data.id, { state, timing, responsePre, httpBox });
      $("history").prepend(li);
      while ($("history").children.length > 1000) $("history").removeChild($("history").lastChild);
    } else {
      const item = historyItems.get(data.id);
      if (!item) return;
      item.state.textContent = data.ok ? "ok" : "error";
      if (!data.ok) item.state.classList.add("bad");
      item.timing.textContent = data.durationMs.toFixed(1) + " ms";
      const response = data.ok ? { jsonrpc: "2.0", result: data.result } : { jsonrpc: "2.0", error: data.error };
      item.responsePre.textContent = json(response);
      for (const x of data.http || []) item.httpBox.append(el("h4", { text: "HTTP" }), el("pre", { class: "http-exchange", text: httpText(x) }));
    }
  }
  /** An HTTP exchange as text: the request line and headers sent, the status and headers received. */
  function httpText(x) {
    const lines = [x.method + " " + x.url];
    for (const [n, v] of x.requestHeaders || []) lines.push(n + ": " + v);
    lines.push("");
    lines.push(x.status != null ? "HTTP " + x.status + " (" + Number(x.durationMs || 0).toFixed(1) + " ms)" : "failed: " + (x.error || "no answer"));
    for (const [n, v] of x.responseHeaders || []) lines.push(n + ": " + v);
    return lines.join("\n");
  }
  function onFrame(data) {
    const wire = $("wire");
    let text = data.text;
    try { text = json(JSON.parse(text)); } catch { /* kept as received */ }
    wire.append(el("li", {}, el("span", { class: "muted", text: (data.dir === "sent" ? "→ sent " : "← received ") + new Date(data.time).toLocaleTimeString() }), el("pre", { text })));
    while (wire.children.length > 1000) wire.removeChild(wire.firstChild);
  }

  // ---- the server's questions ----
  const questions = [];
  let asking = null;
  const dialog = $("ask");

  function onServerRequest(data) {
    questions.push(data);
    nextQuestion();
  }
  function onServerRequestDone(data) {
    const i = questions.findIndex((q) => q.id === data.id);
    if (i >= 0) questions.splice(i, 1);
    if (asking && asking.id === data.id) { asking = null; if (dialog.open) dialog.close(); nextQuestion(); }
  }
  async function answer(id, body) {
    try { await api("POST", "/api/reply/" + id, body); } catch { /* already answered or gone */ }
  }
  function nextQuestion() {
    if (asking || !questions.length) return;
    asking = questions[0];
    const q = asking;
    const body = clear($("ask-body"));
    const p = q.params || {};
    const done = (reply) => { answer(q.id, reply); };
    if (q.method === "elicitation/create" && p.mode === "url") {
      $("ask-title").textContent = "The server asks you to open a URL";
      const url = String(p.url || "");
      put(body, el("p", { text: String(p.message || "") }), el("p", {}, "URL: ", el("code", { text: url })));
      const ok = isHttpUrl(url);
      if (!ok) put(body, el("p", { class: "error", text: "This is not an http(s) URL: it will not be opened." }));
      const accept = el("button", { type: "button", text: "Accept" });
      accept.addEventListener("click", () => { if (ok) window.open(url, "_blank", "noopener,noreferrer"); done({ result: { action: "accept" } }); });
      put(body, el("p", { text: "Open it?" }), el("div", { class: "buttons" }, accept,
        el("button", { type: "button", text: "Decline", onclick: () => done({ result: { action: "decline" } }) }),
        el("button", { type: "button", text: "Cancel", onclick: () => done({ result: { action: "cancel" } }) })));
    } else if (q.method === "elicitation/create") {
      $("ask-title").textContent = "The server asks for input";
      const form = schemaForm(p.requestedSchema || {}, "elicit");
      const error = el("p", { class: "error", role: "alert" });
      const accept = el("button", { type: "button", text: "Accept" });
      accept.addEventListener("click", () => {
        let content;
        try { content = form.read(); } catch (e) { error.textContent = e.message; return; }
        done({ result: { action: "accept", content } });
      });
      put(body, el("p", { text: String(p.message || "") }), form.node, error, el("div", { class: "buttons" }, accept,
        el("button", { type: "button", text: "Decline", onclick: () => done({ result: { action: "decline" } }) }),
        el("button", { type: "button", text: "Cancel", onclick: () => done({ result: { action: "cancel" } }) })));
    } else if (q.method === "sampling/createMessage") {
      $("ask-title").textContent = "The server asks for a model's answer";
      if (p.systemPrompt) put(body, el("p", { class: "muted", text: "System: " + p.systemPrompt }));
      for (const m of p.messages || []) {
        const blocks = Array.isArray(m.content) ? m.content : [m.content];
        put(body, el("div", { class: "message" }, el("h4", { text: String(m.role) }), blocks.map(renderBlock)));
      }
      const text = el("textarea", { id: "sampling-response", rows: "4" });
      const model = el("input", { id: "sampling-model", type: "text", value: "mcpwire-inspector" });
      const send = el("button", { type: "button", text: "Send" });
      send.addEventListener("click", () => done({ result: { role: "assistant", content: { type: "text", text: text.value }, model: model.value || "mcpwire-inspector", stopReason: "endTurn" } }));
      put(body, el("div", { class: "field" }, el("label", { for: "sampling-response", text: "Response" }), text),
        el("div", { class: "field" }, el("label", { for: "sampling-model", text: "Model" }), model),
        el("div", { class: "buttons" }, send, el("button", { type: "button", text: "Decline", onclick: () => done({ error: { code: -1, message: "declined by the user" } }) })));
    } else {
      $("ask-title").textContent = "The server sent " + q.method;
      put(body, el("pre", { text: json(p) }), el("button", { type: "button", text: "Decline", onclick: () => done({ error: { code: -32601, message: "not supported by the inspector" } }) }));
    }
    if (!dialog.open) dialog.showModal();
  }
  dialog.addEventListener("cancel", (ev) => {
    // Escape: the question stays asked until answered.
    ev.preventDefault();
  });

  // ---- authorization (OAuth: the server answered 401) ----
  function onAuthorize(d) {
    const link = $("authorize-link");
    if (isHttpUrl(d.url)) {
      link.href = d.url;
      link.hidden = false;
      $("authorize-url").textContent = d.url;
    } else {
      link.removeAttribute("href");
      link.hidden = true;
      $("authorize-url").textContent = "The authorization URL is not an http(s) URL: it will not be opened.";
    }
    $("authorize").hidden = false;
  }

  // ---- the event stream ----
  async function events() {
    for (;;) {
      try {
        const response = await fetch("/api/events", { headers: { Authorization: "Bearer " + token } });
        if (response.status === 401) { $("no-token").hidden = false; return; }
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        let buffer = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true });
          let cut;
          while ((cut = buffer.indexOf("\n\n")) >= 0) {
            const chunk = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            const data = chunk.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n");
            if (data) dispatch(JSON.parse(data));
          }
        }
      } catch { /* reconnect below */ }
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
  const seen = { seq: 0 };
  function dispatch(event) {
    if (event.seq <= seen.seq) return;
    seen.seq = event.seq;
    const d = event.data || {};
    switch (event.kind) {
      case "notification": onNotification(d); break;
      case "progress": onProgress(d); break;
      case "history": onHistory(d); break;
      case "frame": onFrame(d); break;
      case "serverRequest": onServerRequest(d); break;
      case "serverRequestDone": onServerRequestDone(d); break;
      case "authorize": onAuthorize(d); break;
      case "state":
        if (!d.connecting) $("authorize").hidden = true;
        if (d.connected) { showConnection(d.connection); $("connect-error").textContent = ""; }
        else if (d.connecting) status.textContent = "Connecting to " + (d.target || "") + "…";
        else if (connection) { showConnection(null); if (d.reason) $("connect-error").textContent = d.reason; }
        break;
    }
  }

  // ---- start ----
  async function start() {
    if (!token) { $("no-token").hidden = false; return; }
    events();
    api("GET", "/api/health").then((h) => { inspectorVersion = String((h && h.version) || ""); }).catch(() => {});
    try {
      const state = await api("GET", "/api/state");
      $("roots").value = (state.roots || []).map((r) => r.uri).join("\n");
      if (state.connected) {
        showConnection(state.connection);
        $("target").value = state.connection.target;
        listTools();
      } else if (state.initialTarget) {
        initialTarget = state.initialTarget;
        $("target").value = state.initialTarget;
        connect();
      }
    } catch (e) {
      $("connect-error").textContent = e.message;
    }
  }
  start();
})();
