//! Servers mounted in others ([`ServerBuilder::mount`](super::ServerBuilder::mount)): a
//! mounted server's tools, prompts, resources and templates are registered in the server it
//! is mounted in, under its prefix (see [`Namespace`]), with its own handlers. Nothing
//! goes through a connection: its handlers run on the outer server's requests, with the
//! outer server's layers, and reach the mounted server's own state.
//!
//! What the mounted server registers or removes later is registered or removed in every
//! server it is mounted in (and in theirs), and each tells its clients the list changed;
//! its resource updates reach their subscribers under the prefixed URI.

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use mcpwire_protocol::engine::Change;
use mcpwire_protocol::namespace::Namespace;
use mcpwire_protocol::types::{Prompt, Resource, ResourceTemplate};

use super::registry::{
    Completer, CompleterFn, PromptHandler, ResourceHandler, TemplateHandler, ToolEntry, ToolHandler,
};
use super::{Server, ServerInner};
use crate::authoring::definition::{ResourceDef, ResourceKind};
use crate::authoring::{PromptDef, ToolDef};
use crate::scopes::Scopes;
use crate::state::StateMap;

/// A server this one is mounted in, and under which prefix.
pub(crate) struct Parent {
    server: Weak<ServerInner>,
    namespace: Namespace,
}

impl Server {
    /// Mounts this server in `parent` under `namespace`: everything registered now is
    /// registered there, and everything registered later will be.
    pub(crate) fn mount_into(&self, parent: &Server, namespace: Namespace) {
        self.inner.parents.lock().push(Parent { server: Arc::downgrade(&parent.inner), namespace: namespace.clone() });
        let state = &self.inner.state;
        let tools: Vec<_> = self.inner.tools.with_all(|m| m.values().cloned().collect());
        for entry in tools {
            parent.register_tool(tool_def(&namespace, state, &entry));
        }
        let resources: Vec<_> = self.inner.resources.with_all(|m| m.values().cloned().collect());
        for entry in resources {
            if let Some(def) = resource_def(&namespace, state, &entry.resource, &entry.handler, &entry.scopes) {
                let _ = parent.register_resource(def);
            }
        }
        let templates: Vec<_> = self.inner.templates.with_all(|m| m.values().cloned().collect());
        for entry in templates {
            let (template, handler, completions) = (&entry.template, &entry.handler, &entry.completions);
            if let Some(def) = template_def(&namespace, state, template, handler, completions, &entry.scopes) {
                if let Err(e) = parent.register_resource(def) {
                    tracing::error!(template = %entry.template.uri_template, "the mounted template is left out: {e}");
                }
            }
        }
        let prompts: Vec<_> = self.inner.prompts.with_all(|m| m.values().cloned().collect());
        for entry in prompts {
            let def = prompt_def(&namespace, state, &entry.prompt, &entry.handler, &entry.completions, &entry.scopes);
            parent.register_prompt(def);
        }
    }

    /// Runs `f` on every live server this one is mounted in, with its namespace (the dead
    /// ones are forgotten).
    fn each_parent(&self, f: impl Fn(&Server, &Namespace)) {
        let parents: Vec<(Server, Namespace)> = {
            let mut parents = self.inner.parents.lock();
            if parents.is_empty() {
                return;
            }
            parents.retain(|p| p.server.strong_count() > 0);
            parents.iter().filter_map(|p| Some((Server { inner: p.server.upgrade()? }, p.namespace.clone()))).collect()
        };
        for (parent, namespace) in &parents {
            f(parent, namespace);
        }
    }

    /// Registers a tool just registered here in the servers this one is mounted in.
    pub(crate) fn mount_tool_up(&self, entry: &ToolEntry) {
        let state = self.inner.state.clone();
        self.each_parent(|parent, ns| parent.register_tool(tool_def(ns, &state, entry)));
    }

    /// Registers a resource or template just registered here in the servers this one is
    /// mounted in.
    pub(crate) fn mount_resource_up(&self, registered: &ResourceDef) {
        let state = self.inner.state.clone();
        self.each_parent(|parent, ns| {
            let def = match &registered.kind {
                ResourceKind::Fixed(resource, handler) => {
                    resource_def(ns, &state, resource, handler, &registered.scopes)
                }
                ResourceKind::Template(template, handler, completions) => {
                    template_def(ns, &state, template, handler, completions, &registered.scopes)
                }
            };
            if let Some(def) = def {
                let _ = parent.register_resource(def);
            }
        });
    }

    /// Registers a prompt just registered here in the servers this one is mounted in.
    pub(crate) fn mount_prompt_up(&self, def: &PromptDef) {
        let state = self.inner.state.clone();
        self.each_parent(|parent, ns| {
            parent.register_prompt(prompt_def(ns, &state, &def.prompt, &def.handler, &def.completions, &def.scopes))
        });
    }

    /// Passes a removal or a resource update on to the servers this one is mounted in.
    pub(crate) fn change_up(&self, change: &Change, name: &str) {
        self.each_parent(|parent, ns| match change {
            Change::Tools => {
                parent.remove_tool(&ns.name(name));
            }
            Change::Prompts => {
                parent.remove_prompt(&ns.name(name));
            }
            Change::Resources => {
                if let Some(uri) = ns.uri(name) {
                    parent.remove_resource(&uri);
                }
            }
            Change::ResourceUpdated(_) => {
                if let Some(uri) = ns.uri(name) {
                    parent.notify_resource_updated(uri);
                }
            }
        });
    }
}

fn tool_def(ns: &Namespace, state: &Arc<StateMap>, entry: &ToolEntry) -> ToolDef {
    let mut tool = entry.tool.clone();
    tool.name = ns.name(&tool.name);
    let (handler, state) = (entry.handler.clone(), state.clone());
    let handler: ToolHandler = Arc::new(move |args, ctx| handler(args, ctx.with_state(state.clone())));
    ToolDef { tool, handler, scopes: entry.scopes.clone(), app: None }
}

fn resource_def(
    ns: &Namespace,
    state: &Arc<StateMap>,
    resource: &Resource,
    handler: &ResourceHandler,
    scopes: &Scopes,
) -> Option<ResourceDef> {
    let mut resource = resource.clone();
    let Some(uri) = ns.uri(&resource.uri) else {
        tracing::error!(uri = %resource.uri, "the mounted resource is left out: a URI without a scheme has no prefixed form");
        return None;
    };
    resource.uri = uri;
    let (handler, state, ns) = (handler.clone(), state.clone(), ns.clone());
    let handler: ResourceHandler = Arc::new(move |uri: String, ctx| {
        let inner = ns.upstream_uri(&uri).unwrap_or(uri);
        let (read, ns) = (handler(inner, ctx.with_state(state.clone())), ns.clone());
        Box::pin(async move { read.await.map(|r| ns.contents(r)) })
    });
    Some(ResourceDef { kind: ResourceKind::Fixed(resource, handler), scopes: scopes.clone(), app_check: None })
}

fn template_def(
    ns: &Namespace,
    state: &Arc<StateMap>,
    template: &ResourceTemplate,
    handler: &TemplateHandler,
    completions: &HashMap<String, Completer>,
    scopes: &Scopes,
) -> Option<ResourceDef> {
    let mut template = template.clone();
    let Some(uri_template) = ns.uri(&template.uri_template) else {
        tracing::error!(template = %template.uri_template, "the mounted template is left out: its scheme is not literal");
        return None;
    };
    template.uri_template = uri_template;
    let (handler, handler_state, ns) = (handler.clone(), state.clone(), ns.clone());
    let handler: TemplateHandler = Arc::new(move |uri: String, vars, ctx| {
        let inner = ns.upstream_uri(&uri).unwrap_or(uri);
        let (read, ns) = (handler(inner, vars, ctx.with_state(handler_state.clone())), ns.clone());
        Box::pin(async move { read.await.map(|r| ns.contents(r)) })
    });
    let kind = ResourceKind::Template(template, handler, completers(state, completions));
    Some(ResourceDef { kind, scopes: scopes.clone(), app_check: None })
}

fn prompt_def(
    ns: &Namespace,
    state: &Arc<StateMap>,
    prompt: &Prompt,
    handler: &PromptHandler,
    completions: &HashMap<String, Completer>,
    scopes: &Scopes,
) -> PromptDef {
    let mut prompt = prompt.clone();
    prompt.name = ns.name(&prompt.name);
    let (inner, handler_state) = (handler.clone(), state.clone());
    let handler: PromptHandler = Arc::new(move |args, ctx| inner(args, ctx.with_state(handler_state.clone())));
    PromptDef { prompt, handler, completions: completers(state, completions), scopes: scopes.clone() }
}

/// Completers whose handlers reach the mounted server's state.
fn completers(state: &Arc<StateMap>, completions: &HashMap<String, Completer>) -> HashMap<String, Completer> {
    completions
        .iter()
        .map(|(name, completer)| {
            let completer = match completer {
                Completer::Values(values) => Completer::Values(values.clone()),
                Completer::Handler(f) => {
                    let (f, state) = (f.clone(), state.clone());
                    let wrapped: CompleterFn =
                        Arc::new(move |value, others, ctx| f(value, others, ctx.with_state(state.clone())));
                    Completer::Handler(wrapped)
                }
            };
            (name.clone(), completer)
        })
        .collect()
}
