// Preloaded into Node by the end-to-end tests (NODE_OPTIONS="--require .../loopback.cjs"): a
// server that listens on a port alone (as server-everything's `app.listen(PORT)` does, which would
// bind every interface) binds to 127.0.0.1 instead. Listening on a path, or on an explicit host,
// is left alone.
"use strict";
const net = require("node:net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const port = args[0];
  const portAlone = typeof port === "number" || (typeof port === "string" && /^\d+$/.test(port));
  if (portAlone && (args.length === 1 || typeof args[1] === "function")) {
    args.splice(1, 0, "127.0.0.1");
  }
  return listen.apply(this, args);
};
