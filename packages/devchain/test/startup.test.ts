import { startDevchain, type RunningDevchain } from "../src";

/** What a node says about itself; instanceId is unique per running chain. */
async function metadata(url: string): Promise<{ instanceId: string; chainId: number }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "hardhat_metadata", params: [] }),
  });
  return ((await res.json()) as { result: { instanceId: string; chainId: number } }).result;
}

describe("devchain startup", () => {
  it("devchains started at once on OS-picked ports each announce their own chain", async () => {
    const chains: RunningDevchain[] = [];
    try {
      chains.push(...(await Promise.all([startDevchain({ port: 0 }), startDevchain({ port: 0 }), startDevchain({ port: 0 })])));
      expect(new Set(chains.map((c) => c.url)).size).toBe(3);
      const ids = await Promise.all(chains.map(async (c) => (await metadata(c.url)).instanceId));
      expect(new Set(ids).size).toBe(3);
    } finally {
      await Promise.all(chains.map((c) => c.stop()));
    }
  }, 120_000);
});
