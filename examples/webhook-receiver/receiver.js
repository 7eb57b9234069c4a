// A receiver that accepts a delivery only when both signatures verify.
// SERVICE_URL=https://checkout.example.com WEBHOOK_SECRET=whsec_… PORT=8080 node receiver.js
// It prints "listening on <port>", then one JSON line per event it accepts.
const { createServer } = require("node:http");
const { verifyEd25519, verifyHmac } = require("./verify.js");

const { SERVICE_URL, WEBHOOK_SECRET, PORT = "8080" } = process.env;
let keys = [];
let keysFetchedAt = 0;
// The service's Ed25519 keys; fetched again after a failed check (a rotation), at most once a minute.
async function refreshKeys() {
  if (Date.now() - keysFetchedAt < 60_000) return false;
  keysFetchedAt = Date.now();
  const res = await fetch(`${SERVICE_URL}/v1/webhooks/verification-key`);
  keys = (await res.json()).keys.map((k) => k.public_key_pem);
  return true;
}
const seen = new Set(); // webhook-id values already handled: retries and duplicates carry the same one

const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", async () => {
    const body = Buffer.concat(chunks).toString("utf8"); // verify the raw bytes, never re-serialised JSON
    const edHeader = req.headers["x-service-ed25519"];
    const edOk = verifyEd25519(body, edHeader, keys) || ((await refreshKeys().catch(() => false)) && verifyEd25519(body, edHeader, keys));
    if (!edOk || !verifyHmac(body, req.headers["x-service-signature"], WEBHOOK_SECRET)) return res.writeHead(401).end();
    const id = req.headers["webhook-id"];
    if (!seen.has(id)) {
      seen.add(id);
      const event = JSON.parse(body); // a production receiver drops event.data.test_mode === true
      console.log(JSON.stringify({ id, event: event.event, data: event.data }));
    }
    res.writeHead(200).end();
  });
});
refreshKeys().then(() => server.listen(Number(PORT), "127.0.0.1", () => console.log(`listening on ${server.address().port}`)));
