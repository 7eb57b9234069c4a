// Target G20 for the processes a test starts (the e2e target, the local
// cluster's services): preloaded with `node --require`, it writes a line to
// $C402_NON_LOOPBACK_LOG for every connection attempt to an address outside
// 127.0.0.0/8 and ::1 (unix sockets are local; Node emits `connectionAttempt` with each address tried,
// after lookup; TLS and undici connect through the same method). It records,
// never blocks: the test that started the process reads the file.
"use strict";
const { appendFileSync } = require("node:fs");
const net = require("node:net");

const log = process.env.C402_NON_LOOPBACK_LOG;
const isLoopback = (ip) => /^127\.\d+\.\d+\.\d+$/.test(ip) || /^::ffff:127\.\d+\.\d+\.\d+$/i.test(ip) || ip === "::1";

if (log) {
  const connect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function (...args) {
    this.on("connectionAttempt", (ip, port) => {
      // A unix socket's path is local by nature (tsx talks to its own process through one).
      if (net.isIP(ip) !== 0 && !isLoopback(ip)) appendFileSync(log, `${process.pid} ${process.argv[1] ?? "node"} ${ip} ${port}\n`);
    });
    return connect.apply(this, args);
  };
}
