import { createPublicKey, generateKeyPairSync } from "node:crypto";
import fc from "fast-check";
import { Webhook } from "standardwebhooks";
import { newId } from "@c402/ids";
import { verifyEd25519, verifyHmac } from "../../../examples/webhook-receiver/verify";
import { newEndpointSecret, signatureHeaders, SIGNATURE_HEADERS, type ServiceSigningKey } from "../src/domain/signatures";

/**
 * G15: signatures interoperate and verification is strict. 10,000 random
 * payloads are signed as deliveries are; the Standard Webhooks headers verify
 * with the reference `standardwebhooks` library and the spec's two headers
 * with the README receiver's checks. Tampered bodies, wrong secrets or keys,
 * timestamps 301 s off either way, missing headers, unknown schemes and
 * re-serialised JSON are all refused: no false accept.
 */

const RUNS = 10_000;

function serviceKey(): ServiceSigningKey & { pem: string } {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  return { id: newId("signingKey"), privateKey, pem: publicKey.export({ format: "pem", type: "spki" }) as string };
}

const key = serviceKey();
const otherKey = serviceKey();
const now = () => Math.floor(Date.now() / 1000);

const standardHeaders = (h: Record<string, string>) => ({
  "webhook-id": h[SIGNATURE_HEADERS.id]!,
  "webhook-timestamp": h[SIGNATURE_HEADERS.timestamp]!,
  "webhook-signature": h[SIGNATURE_HEADERS.standard]!,
});

/** Every verifier a receiver might use, on one delivery: true only when each accepts. */
function verdicts(body: string, h: Record<string, string>, secret: string, pems: string[]) {
  let standard: boolean;
  try {
    new Webhook(secret).verify(body, standardHeaders(h));
    standard = true;
  } catch {
    standard = false;
  }
  return {
    standard,
    hmac: verifyHmac(body, h[SIGNATURE_HEADERS.hmac], secret),
    ed25519: verifyEd25519(body, h[SIGNATURE_HEADERS.ed25519], pems),
  };
}

/** Bodies are JSON (the library parses what it verified): any JSON, and strings of any Unicode, as JSON text. */
const payloads = fc.oneof(
  fc.json(),
  fc.string({ unit: "grapheme", maxLength: 2000 }).map((s) => JSON.stringify(s)),
  fc.string({ unit: "binary", maxLength: 500 }).map((s) => JSON.stringify(s)),
  fc
    .record({ event: fc.constant("checkout.paid"), data: fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.integer(), fc.boolean())) })
    .map((v) => JSON.stringify(v)),
);

describe("webhook signatures (G15)", () => {
  afterEach(() => jest.useRealTimers());

  it(`verifies ${RUNS} random payloads with the standardwebhooks library and the receiver's checks`, () => {
    let verified = 0;
    fc.assert(
      fc.property(payloads, (body) => {
        const secret = newEndpointSecret();
        const h = signatureHeaders({ id: newId("webhookDelivery"), timestamp: now(), body, secret, keys: [key] });
        const v = verdicts(body, h, secret, [key.pem]);
        if (v.standard && v.hmac && v.ed25519) verified++;
        return v.standard && v.hmac && v.ed25519;
      }),
      { numRuns: RUNS },
    );
    expect(verified).toBe(RUNS);
  });

  it("accepts no tampered body, wrong secret or key, stale or future timestamp, missing header, unknown scheme or re-serialised JSON", () => {
    // Date frozen: a second boundary crossed between signing at now ± 301 and checking would
    // otherwise bring the future one inside the 300 s tolerance (a loaded CI machine did).
    jest.useFakeTimers({ now: Date.now() });
    let falseAccepts = 0;
    let cases = 0;
    const refuse = (body: string, h: Record<string, string>, secret: string, pems: string[], only?: keyof ReturnType<typeof verdicts>) => {
      const v = verdicts(body, h, secret, pems);
      const accepted = only ? [v[only]] : [v.standard, v.hmac, v.ed25519];
      cases += accepted.length;
      falseAccepts += accepted.filter(Boolean).length;
    };
    fc.assert(
      fc.property(
        fc.json({ maxDepth: 3 }).filter((j) => j.length > 2),
        (body) => {
          const secret = newEndpointSecret();
          const id = newId("webhookDelivery");
          const h = signatureHeaders({ id, timestamp: now(), body, secret, keys: [key] });
          // Tampered body: one character changed, or one appended.
          const flipped = body.slice(0, -1) + String.fromCharCode((body.charCodeAt(body.length - 1) + 1) % 0xd800);
          refuse(flipped, h, secret, [key.pem]);
          refuse(`${body} `, h, secret, [key.pem]);
          // Re-serialised JSON (what a framework's body parser hands over) is other bytes.
          const reserialised = JSON.stringify(JSON.parse(body), null, 1);
          if (reserialised !== body) refuse(reserialised, h, secret, [key.pem]);
          // Wrong secret, wrong key.
          refuse(body, h, newEndpointSecret(), [otherKey.pem], "standard");
          refuse(body, h, newEndpointSecret(), [otherKey.pem], "hmac");
          refuse(body, h, newEndpointSecret(), [otherKey.pem], "ed25519");
          // Signed 301 s in the past or the future (the clock is frozen for this test, so signing
          // and checking see the same second however slow the machine is).
          for (const skew of [-301, 301]) refuse(body, signatureHeaders({ id, timestamp: now() + skew, body, secret, keys: [key] }), secret, [key.pem]);
          // Another delivery id under the same signature (Standard Webhooks signs the id).
          refuse(body, { ...h, [SIGNATURE_HEADERS.id]: newId("webhookDelivery") }, secret, [key.pem], "standard");
          // Missing headers.
          const { [SIGNATURE_HEADERS.hmac]: _hmac, [SIGNATURE_HEADERS.ed25519]: _ed, [SIGNATURE_HEADERS.standard]: _std, ...bare } = h;
          refuse(body, bare, secret, [key.pem]);
          // An unknown scheme carrying the right signature is not a v1 signature.
          const renamed = Object.fromEntries(Object.entries(h).map(([k, value]) => [k, value.replace(/v1=/g, "v2=").replace(/^v1,/, "v2,")]));
          refuse(body, renamed, secret, [key.pem]);
          return true;
        },
      ),
      { numRuns: 500 },
    );
    expect(cases).toBeGreaterThan(5_000);
    expect(falseAccepts).toBe(0);
  });

  it("signs with every key it is given (a rotation's overlap): either key alone verifies", () => {
    const body = JSON.stringify({ event: "checkout.paid" });
    const secret = newEndpointSecret();
    const h = signatureHeaders({ id: newId("webhookDelivery"), timestamp: now(), body, secret, keys: [otherKey, key] });
    expect(h[SIGNATURE_HEADERS.ed25519]).toMatch(/^t=[0-9]+,v1=[A-Za-z0-9+/=]+,v1=[A-Za-z0-9+/=]+$/);
    expect(verifyEd25519(body, h[SIGNATURE_HEADERS.ed25519], [key.pem])).toBe(true);
    expect(verifyEd25519(body, h[SIGNATURE_HEADERS.ed25519], [otherKey.pem])).toBe(true);
    expect(verifyEd25519(body, h[SIGNATURE_HEADERS.ed25519], [serviceKey().pem])).toBe(false);
    expect(createPublicKey(key.privateKey).export({ format: "pem", type: "spki" })).toBe(key.pem);
  });

  it("makes Standard Webhooks secrets: whsec_ and 32 random bytes", () => {
    const a = newEndpointSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), "base64")).toHaveLength(32);
    expect(newEndpointSecret()).not.toBe(a);
  });
});
