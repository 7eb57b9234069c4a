import { createHmac, timingSafeEqual, verify } from "node:crypto";
import { createServer } from "node:http";
const { SERVICE_URL = "http://127.0.0.1:4020", WEBHOOK_SECRET, PORT = "8080" } = process.env;
const { keys } = await (await fetch(`${SERVICE_URL}/v1/webhooks/verification-key`)).json();
const parse = (h = "") => ({ t: h.split(",")[0].slice(2), sigs: h.split(",").slice(1).map((s) => s.slice(3)) });
createServer((req, res) => { let body = ""; req.setEncoding("utf8").on("data", (c) => (body += c)).on("end", () => {
  const ed = parse(req.headers["x-service-ed25519"]), mac = parse(req.headers["x-service-signature"]);
  const want = createHmac("sha256", WEBHOOK_SECRET).update(`${mac.t}.${body}`).digest();
  const macOk = mac.sigs.some((s) => Buffer.from(s, "hex").length === 32 && timingSafeEqual(Buffer.from(s, "hex"), want));
  const edOk = ed.sigs.some((s) => keys.some((k) => verify(null, Buffer.from(`${ed.t}.${body}`), k.public_key_pem, Buffer.from(s, "base64"))));
  if (!macOk || !edOk || Math.abs(Date.now() / 1000 - mac.t) > 300) return res.writeHead(401).end();
  console.log(req.headers["webhook-id"], JSON.parse(body).event); res.writeHead(200).end(); // dedupe on webhook-id
}); }).listen(Number(PORT), "127.0.0.1", () => console.log("listening"));
