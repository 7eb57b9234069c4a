import { spawn, execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";

const run = promisify(execFile);

/** What a client in another process does: stellar-sdk 15's rpc.Server, no allowHttp, trusting what NODE_EXTRA_CA_CERTS names. */
const CLIENT = `
const { rpc } = require("@stellar/stellar-sdk");
new rpc.Server(process.argv[1]).getLatestLedger().then(
  (ledger) => console.log(JSON.stringify({ sequence: ledger.sequence })),
  (err) => { console.log(JSON.stringify({ error: err.message })); },
);
`;

describe("stellar-standin CLI", () => {
  it("serves on an OS-picked loopback port, writes its CA for other processes' NODE_EXTRA_CA_CERTS, and stops on SIGTERM", async () => {
    const dir = mkdtempSync(join(tmpdir(), "stellar-standin-"));
    const caFile = join(dir, "ca.pem");
    const child = spawn(process.execPath, [join(__dirname, "../bin/stellar-standin.cjs")], {
      env: { ...process.env, STELLAR_STANDIN_PORT: "0", STELLAR_STANDIN_CA_FILE: caFile },
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      const ready = await new Promise<{ url: string; network: string; usdc: string; caFile: string; caCertificatePem: string }>((resolve, reject) => {
        createInterface({ input: child.stdout }).on("line", (line) => {
          if (line.startsWith("STELLAR_STANDIN_READY ")) resolve(JSON.parse(line.slice("STELLAR_STANDIN_READY ".length)));
        });
        child.once("exit", (code) => reject(new Error(`stellar-standin exited (${code})`)));
      });
      expect(ready).toMatchObject({
        url: expect.stringMatching(/^https:\/\/127\.0\.0\.1:\d+$/),
        network: "stellar:testnet",
        usdc: "CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA",
        caFile,
      });
      expect(readFileSync(caFile, "utf8")).toBe(ready.caCertificatePem);

      const client = (env: NodeJS.ProcessEnv) => run(process.execPath, ["-e", CLIENT, ready.url], { cwd: join(__dirname, ".."), env });
      const { NODE_EXTRA_CA_CERTS: _, ...withoutCa } = process.env;
      expect(JSON.parse((await client({ ...withoutCa, NODE_EXTRA_CA_CERTS: caFile })).stdout)).toEqual({ sequence: expect.any(Number) });
      expect(JSON.parse((await client(withoutCa)).stdout)).toEqual({ error: expect.stringMatching(/certificate/) });
    } finally {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
