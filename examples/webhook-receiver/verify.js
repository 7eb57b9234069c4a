// Verifying a delivery with node:crypto alone. Both checks run on the raw body
// bytes, reject a stale timestamp first, and compare MACs in constant time.
const { createHmac, timingSafeEqual, verify } = require("node:crypto");

const TOLERANCE_SECONDS = 300;

/** "t=<unix>,v1=<sig>[,v1=<sig>]" → { t, signatures }; anything else → null. */
function parseSignatureHeader(header) {
  if (typeof header !== "string") return null;
  let t = null;
  const signatures = [];
  for (const part of header.split(",")) {
    const eq = part.indexOf("=");
    const [name, value] = [part.slice(0, eq), part.slice(eq + 1)];
    if (name === "t" && /^[0-9]{1,12}$/.test(value)) t = Number(value);
    else if (name === "v1" && value) signatures.push(value);
  }
  return t === null || signatures.length === 0 ? null : { t, signatures };
}

const fresh = (t, nowSeconds) => Math.abs(nowSeconds - t) <= TOLERANCE_SECONDS;

/** X-Service-Signature: HMAC-SHA256 of `{t}.{raw_body}` keyed with the endpoint's whsec_… secret (as text). */
function verifyHmac(rawBody, header, secret, nowSeconds = Date.now() / 1000) {
  const parsed = parseSignatureHeader(header);
  if (!parsed || !fresh(parsed.t, nowSeconds)) return false;
  const expected = createHmac("sha256", secret).update(`${parsed.t}.${rawBody}`).digest();
  return parsed.signatures.some((hex) => {
    const given = Buffer.from(hex, "hex");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/** X-Service-Ed25519: any v1 signature of `{t}.{raw_body}` verifies with any of the keys (PEM from GET /v1/webhooks/verification-key). */
function verifyEd25519(rawBody, header, publicKeysPem, nowSeconds = Date.now() / 1000) {
  const parsed = parseSignatureHeader(header);
  if (!parsed || !fresh(parsed.t, nowSeconds)) return false;
  const signed = Buffer.from(`${parsed.t}.${rawBody}`);
  return parsed.signatures.some((b64) => publicKeysPem.some((pem) => verify(null, signed, pem, Buffer.from(b64, "base64"))));
}

module.exports = { TOLERANCE_SECONDS, parseSignatureHeader, verifyHmac, verifyEd25519 };
