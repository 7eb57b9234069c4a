import { spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";

describe("solana-devnet CLI", () => {
  it("serves on an OS-picked loopback port, announces itself in one line, and stops on SIGTERM", async () => {
    const child = spawn(process.execPath, [join(__dirname, "../bin/solana-devnet.cjs")], {
      env: { ...process.env, SOLANA_DEVNET_PORT: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      const ready = await new Promise<{ url: string; network: string; usdcMint: string }>((resolve, reject) => {
        createInterface({ input: child.stdout }).on("line", (line) => {
          if (line.startsWith("SOLANA_DEVNET_READY ")) resolve(JSON.parse(line.slice("SOLANA_DEVNET_READY ".length)));
        });
        child.once("exit", (code) => reject(new Error(`solana-devnet exited (${code})`)));
      });
      expect(ready.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(ready.network).toBe("solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1");
      const res = await fetch(ready.url, { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "getGenesisHash" }) });
      expect(((await res.json()) as { result: string }).result).toBe("EtWTRABZaYq6iMfeYKouRu166VU2xqa1");
    } finally {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
    }
  }, 30_000);
});
