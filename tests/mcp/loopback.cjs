// Preloaded into the Node servers the tests start (`node -r ./loopback.cjs ...`): the
// reference servers and the conformance suite listen on every interface, and tests bind
// only to 127.0.0.1.
//
// Listening on a named host is asynchronous in Node (a DNS lookup comes first), while
// some servers read `server.address().port` right after `listen(0)`. So for port 0 a
// free loopback port is found first, synchronously, and `address()` reports it until the
// real one is known.
const net = require("net");
const { execFileSync } = require("child_process");

const listen = net.Server.prototype.listen;
const address = net.Server.prototype.address;

function freePort() {
  const out = execFileSync(process.execPath, [
    "-e",
    'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{process.stdout.write(String(s.address().port));s.close()})',
  ]);
  return Number(out.toString());
}

net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first))) {
    if (typeof args[1] !== "string") {
      let port = Number(first);
      if (port === 0) {
        port = freePort();
        this._loopbackPort = port;
      }
      args[0] = port;
      args.splice(1, 0, "127.0.0.1");
    }
  } else if (first && typeof first === "object" && !first.host && !first.path) {
    args[0] = { ...first, host: "127.0.0.1" };
  }
  return listen.apply(this, args);
};

net.Server.prototype.address = function () {
  const real = address.call(this);
  if (real === null && this._loopbackPort) {
    return { address: "127.0.0.1", family: "IPv4", port: this._loopbackPort };
  }
  return real;
};
