// Preloaded into the published HTTP servers (node --require): they call listen(port) with no
// host, which binds every interface, and servers the tests start listen on 127.0.0.1 only.
const net = require("node:net");

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const [first, second] = args;
  if (first !== null && typeof first === "object" && first.host === undefined && first.path === undefined) {
    args[0] = { ...first, host: "127.0.0.1" };
  } else if ((typeof first === "number" || /^\d+$/.test(String(first))) && typeof second !== "string") {
    args.splice(1, 0, "127.0.0.1");
  }
  return listen.apply(this, args);
};
