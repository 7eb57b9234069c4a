#!/usr/bin/env node
// Health probe of a devchain container (compose's healthcheck): exits 0 once the chain at the URL
// answers with the split factory's code in place (set up before the demo accounts are funded), 1
// otherwise. Plain Node, no tsx: `node packages/devchain/bin/devchain-probe.cjs http://127.0.0.1:8545`.
const layout = require("../layout.json");

const url = process.argv[2] ?? "http://127.0.0.1:8545";
fetch(url, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getCode", params: [layout.splitFactory, "latest"] }),
  signal: AbortSignal.timeout(4_000),
})
  .then((res) => res.json())
  .then(
    (body) => process.exit(typeof body.result === "string" && body.result !== "0x" ? 0 : 1),
    () => process.exit(1),
  );
