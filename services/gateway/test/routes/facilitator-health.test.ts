import { supportedMessage } from "@c402/contracts";
import { bodyOf, recorded, servers } from "../support/fake-gateway";

/** GET /health/facilitator (routes/facilitator.ts): what each chain family settles now, in one shape whatever the state. */

const serve = servers();
const SIGNER = "0x3333333333333333333333333333333333333333";

/** payments.facilitatorSupported answering `live` networks for the base family (and nothing for the others, which are not built). */
const supported =
  (live: string[]) =>
  async ({ family }: { family?: string }) =>
    supportedMessage({
      kinds: family === "base" ? live.map((network) => ({ x402Version: 2, scheme: "exact", network })) : [],
      extensions: [],
      signers: family === "base" && live.length ? { "eip155:*": [SIGNER] } : {},
    });

const CHAIN_KEYS = ["available", "networks", "reason", "settles"];
const notBuilt = (name: string) => ({ networks: [], available: false, settles: "none", reason: `${name} settlement is not available on this deployment yet.` });

function expectStableShape(body: any) {
  expect(Object.keys(body).sort()).toEqual(["chains", "checked_at", "status"]);
  expect(Object.keys(body.chains).sort()).toEqual(["base", "solana", "stellar"]);
  for (const chain of Object.values(body.chains)) expect(Object.keys(chain as object).sort()).toEqual(CHAIN_KEYS);
  expect(new Date(body.checked_at).toISOString()).toBe(body.checked_at);
}

describe("GET /health/facilitator", () => {
  it("payments up with the devchain: base settles live on eip155:84532; Solana and Stellar are not built", async () => {
    const { fakes, called, of } = recorded({ payments: { facilitatorSupported: supported(["eip155:84532"]) } });
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/health/facilitator`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = await bodyOf(res);
    expectStableShape(body);
    expect(body).toEqual({
      status: "ok",
      checked_at: expect.any(String),
      chains: {
        base: { networks: ["eip155:84532"], available: true, settles: "live", reason: null },
        solana: notBuilt("Solana"),
        stellar: notBuilt("Stellar"),
      },
    });
    // The same question /x402/{family}/supported asks, once per family.
    expect(called()).toEqual(["payments.facilitatorSupported", "payments.facilitatorSupported", "payments.facilitatorSupported"]);
    expect(of("facilitatorSupported")).toEqual([{ family: "base" }, { family: "solana" }, { family: "stellar" }]);
  });

  it("payments up without a live network: base is rehearsal-only, not available, with the reason", async () => {
    const { fakes } = recorded({ payments: { facilitatorSupported: supported([]) } });
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/health/facilitator`);
    expect(res.status).toBe(200);
    const body = await bodyOf(res);
    expectStableShape(body);
    expect(body.status).toBe("ok");
    expect(body.chains.base).toEqual({ networks: [], available: false, settles: "rehearsal-only", reason: expect.stringMatching(/No live network/) });
  });

  it("payments down: still 200 in the same shape, degraded, no family available, each with its reason", async () => {
    const { fakes } = recorded({ payments: { facilitatorSupported: async () => Promise.reject(new Error("14 UNAVAILABLE: connection refused")) } });
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/health/facilitator`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const body = await bodyOf(res);
    expectStableShape(body);
    expect(body).toEqual({
      status: "degraded",
      checked_at: expect.any(String),
      chains: {
        base: { networks: [], available: false, settles: "none", reason: "The payments service did not answer: nothing settles until it is back." },
        solana: notBuilt("Solana"),
        stellar: notBuilt("Stellar"),
      },
    });
  });

  it("payments going down after an answer: base keeps naming its configured network, unavailable; back up, available again", async () => {
    let up = true;
    const answer = supported(["eip155:84532"]);
    const { fakes } = recorded({
      payments: { facilitatorSupported: async (req: { family?: string }) => (up ? answer(req) : Promise.reject(new Error("deadline exceeded"))) },
    });
    const { url } = await serve.app(fakes);
    expect((await bodyOf(await fetch(`${url}/health/facilitator`))).chains.base.available).toBe(true);
    up = false;
    const down = await bodyOf(await fetch(`${url}/health/facilitator`));
    expect(down.status).toBe("degraded");
    expect(down.chains.base).toEqual({
      networks: ["eip155:84532"],
      available: false,
      settles: "none",
      reason: "The payments service did not answer: nothing settles until it is back.",
    });
    up = true;
    const again = await bodyOf(await fetch(`${url}/health/facilitator`));
    expect(again.status).toBe("ok");
    expect(again.chains.base).toEqual({ networks: ["eip155:84532"], available: true, settles: "live", reason: null });
  });
});
