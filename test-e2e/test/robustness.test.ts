import { encodeHeader, signExactEvmPayment } from "@c402/x402";
import fc from "fast-check";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { devchainWallets, type DevchainWallets } from "../src/devchain";
import { baseUrl, call, decoded, newCheckout, newSeller, rawRequest } from "../src/http";

/**
 * G21 (10,000 fast-check malformed payment headers: never a crash or a 5xx,
 * always a problem document) and G8 (one payment cannot buy twice: the same payment 50×
 * concurrently and 50× serially, under both header names, on every route that
 * takes a payment today).
 */
/** A GET written straight to a socket; resolves with whatever the server answered before closing. */
function rawGet(path: string, headers: Record<string, string>): Promise<string> {
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return rawRequest(`GET ${path} HTTP/1.1\r\nHost: ${new URL(baseUrl()).host}\r\nConnection: close\r\n${lines.join("")}\r\n`);
}

describe("robustness of the payment faces", () => {
  it("answers 10,000 fast-check malformed payment headers with a 4xx/402 problem document, never 5xx, and stays healthy (G21)", async () => {
    const s = await newSeller();
    const c = await newCheckout(s.key);
    const valid = encodeHeader(
      await signExactEvmPayment(
        privateKeyToAccount(generatePrivateKey()),
        decoded((await call("GET", `/c/${c.id}/test`)).headers.get("payment-required")).accepts[0],
      ),
    );
    const b64 = (text: string | Uint8Array) => Buffer.from(text).toString("base64");
    const visibleAscii = fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code)), maxLength: 400 });
    // The kinds G21 names: bad base64, 1 MB, deep nesting, wrong types, huge integers, __proto__ keys, invalid UTF-8 (and broken real payments).
    const malformed = fc.oneof(
      { weight: 10, arbitrary: visibleAscii },
      { weight: 10, arbitrary: fc.nat({ max: valid.length - 1 }).map((n) => valid.slice(0, n)) },
      {
        weight: 10,
        arbitrary: fc
          .tuple(fc.nat({ max: valid.length - 1 }), fc.constantFrom("/", "+", "=", "A", "-"))
          .map(([i, ch]) => valid.slice(0, i) + ch + valid.slice(i + 1)),
      },
      {
        weight: 10,
        arbitrary: fc
          .tuple(fc.integer({ min: 1, max: 5_000 }), fc.constantFrom("[", '{"a":'))
          .map(([depth, open]) => b64(open.repeat(depth) + "1" + (open === "[" ? "]" : "}").repeat(depth))),
      },
      {
        weight: 10,
        arbitrary: fc
          .record({ x402Version: fc.jsonValue(), accepted: fc.jsonValue(), payload: fc.jsonValue(), resource: fc.jsonValue() }, { requiredKeys: [] })
          .map((o) => b64(JSON.stringify(o))),
      },
      {
        weight: 10,
        arbitrary: fc.tuple(fc.integer({ min: 20, max: 400 }), fc.constantFrom("value", "validAfter", "validBefore", "x402Version")).map(([digits, field]) => {
          const huge = "9".repeat(digits);
          return b64(
            `{"x402Version":${field === "x402Version" ? huge : 2},"payload":{"signature":"0x${"f".repeat(130)}","authorization":{"${field}":${huge}}}}`,
          );
        }),
      },
      {
        weight: 10,
        arbitrary: fc
          .constantFrom(
            '{"__proto__":{"x402Version":2}}',
            '{"x402Version":2,"accepted":{"__proto__":{"amount":"1"}}}',
            '{"x402Version":2,"payload":{"constructor":{"prototype":{"polluted":1}}}}',
          )
          .map(b64),
      },
      { weight: 10, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes) => b64(Uint8Array.from([0xc3, 0x28, ...bytes]))) },
    );
    await fc.assert(
      fc.asyncProperty(malformed, fc.constantFrom("PAYMENT-SIGNATURE", "X-PAYMENT"), fc.constantFrom("", "/test"), async (header, name, face) => {
        const r = await call("GET", `/c/${c.id}${face}`, { headers: { [name]: header } });
        if (r.status === 200) {
          // A mutation outside the signed part (say, a letter of `resource`) leaves a real payment: it buys, once.
          expect(decoded(header).payload).toEqual(decoded(valid).payload);
          return;
        }
        expect(r.status >= 400 && r.status < 500).toBe(true);
        expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
        expect(typeof r.body.type).toBe("string");
      }),
      { numRuns: 10_000, seed: 21 },
    );

    // 1 MB values (and sizes around Node's 16 KiB header limit), on a raw socket: the server answers
    // before reading the rest, which makes fetch fail on its own write.
    for (const size of [16 * 1024, 64 * 1024, 1024 * 1024]) {
      for (const name of ["PAYMENT-SIGNATURE", "X-PAYMENT"]) {
        const answer = await rawGet(`/c/${c.id}`, { [name]: "A".repeat(size) });
        expect(answer).toMatch(/^HTTP\/1\.1 431 /);
        expect(answer).toMatch(/\r\ncontent-type: application\/problem\+json/i);
        expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toMatchObject({
          status: 431,
          type: expect.stringMatching(/\/problems\/headers-too-large$/),
        });
      }
    }
    expect((await call("GET", "/health?deep=true")).body.status).toBe("ok");
  }, 300_000);

  describe("one payment cannot buy twice: 50× concurrently then 50× serially, under both header names (G8)", () => {
    let chain: DevchainWallets;

    beforeAll(async () => {
      chain = await devchainWallets(8);
    });

    /** 50 at once, then 50 one after another, alternating PAYMENT-SIGNATURE and X-PAYMENT. */
    async function present(path: string, header: string) {
      const send = (i: number) => call("GET", path, { headers: { [i % 2 ? "X-PAYMENT" : "PAYMENT-SIGNATURE"]: header } });
      const concurrent = await Promise.all(Array.from({ length: 50 }, (_, i) => send(i)));
      const serial = [];
      for (let i = 0; i < 50; i++) serial.push(await send(i));
      return [...concurrent, ...serial];
    }

    function expectOneSale(all: Awaited<ReturnType<typeof present>>) {
      expect(all.map((r) => r.status)).toEqual(Array(100).fill(200));
      expect(new Set(all.map((r) => r.body.receipt.id)).size).toBe(1);
      expect(all.filter((r) => r.body.redelivered === false)).toHaveLength(1);
    }

    it.each([
      ["the live face", ""],
      ["the live face's v1 URL with a handoff nonce", "?x402_version=1&h=g8-handoff-nonce-0001"],
    ])("%s: one charge, one receipt", async (_route, query) => {
      const buyer = await chain.fundedBuyer(1_000_000n);
      const s = await newSeller();
      const c = await newCheckout(s.key, { test_mode: false, reusable: true });
      const required = decoded((await call("GET", `/c/${c.id}`)).headers.get("payment-required"));
      const header = encodeHeader(await signExactEvmPayment(buyer, required.accepts[0], { resourceUrl: required.resource.url }));
      expectOneSale(await present(`/c/${c.id}${query}`, header));
      expect(await chain.balance(buyer.address)).toBe(1_000_000n - 110_500n);
    });

    it("the rehearsal face: one simulated settlement, one receipt", async () => {
      const s = await newSeller();
      const c = await newCheckout(s.key);
      const required = decoded((await call("GET", `/c/${c.id}/test`)).headers.get("payment-required"));
      const header = encodeHeader(await signExactEvmPayment(privateKeyToAccount(generatePrivateKey()), required.accepts[0]));
      expectOneSale(await present(`/c/${c.id}/test`, header));
    });

    it("the facilitator's settle: every attempt answers the one settlement (same transaction), one transfer", async () => {
      const buyer = await chain.fundedBuyer(1_000_000n);
      const s = await newSeller();
      const c = await newCheckout(s.key, { test_mode: false });
      const requirement = decoded((await call("GET", `/c/${c.id}`)).headers.get("payment-required")).accepts[0];
      const payload = await signExactEvmPayment(buyer, requirement);
      const body = { network: "eip155:84532", requirement, payload };
      // 30 in all: the facilitator takes at most 30 calls a minute per payer.
      const concurrent = await Promise.all(Array.from({ length: 20 }, () => call("POST", "/x402/base/settle", { body })));
      const serial = [];
      for (let i = 0; i < 10; i++) serial.push(await call("POST", "/x402/base/settle", { body }));
      const all = [...concurrent, ...serial];
      expect(all.map((r) => [r.status, r.body.success, r.body.errorReason ?? r.body.type])).toEqual(Array(30).fill([200, true, undefined]));
      expect(new Set(all.map((r) => r.body.transaction)).size).toBe(1);
      expect(await chain.balance(buyer.address)).toBe(1_000_000n - 110_500n);
      expect(await chain.balance(s.wallet.address)).toBe(100_000n);
    });
  });
});
