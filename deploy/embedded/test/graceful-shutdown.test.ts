import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeOrigin, type FakeOrigin } from "@c402/testkit/fake-origin";
import { waitUntilHealthy } from "../../local/src/health-wait";
import { freePort } from "../../local/src/ports";
import { spawnEmbeddedProcess } from "./embedded-process";
import { json, rehearsalSale } from "./seller";

/**
 * G36 for the embedded process (`npm start`): SIGTERM while a paid purchase is
 * in flight lets it finish (the origin answers, the payment settles, the buyer
 * gets goods and receipt), refuses new connections meanwhile, and exits 0 well
 * inside Kubernetes' 30 s grace; after a restart the books hold that one sale.
 */
const ORIGIN_DELAY_MS = 1_500;

function startProcess(port: number, dataDir: string): ChildProcess {
  return spawnEmbeddedProcess({ port, dataDir, stdio: ["ignore", "ignore", "inherit"] });
}

/** A request on a connection of its own (no pool): how a new client meets a stopping server. */
function freshRequest(url: string): Promise<string> {
  return new Promise((resolve) => {
    const req = request(url, { agent: false, headers: { connection: "close" } }, (res) => {
      res.resume();
      resolve(`status ${res.statusCode}`);
    });
    req.on("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    req.end();
  });
}

describe("graceful shutdown of the embedded process (G36)", () => {
  let origin: FakeOrigin;
  let dataDir: string;
  let child: ChildProcess | undefined;

  beforeAll(async () => {
    origin = await startFakeOrigin();
    dataDir = mkdtempSync(join(tmpdir(), "c402-sigterm-"));
  });
  afterAll(async () => {
    if (child && child.exitCode === null) child.kill("SIGKILL");
    await origin.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("finishes a paid relay purchase in flight at SIGTERM, refuses new connections, exits 0 in time, and keeps the sale", async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    child = startProcess(port, dataDir);
    await waitUntilHealthy(base, child, 60_000);
    const { auth, face, payment } = await rehearsalSale(base, {
      title: "Slow weather",
      price_usd: "0.10",
      origin_url: `${origin.url}/slow/${ORIGIN_DELAY_MS}`,
      reusable: true,
    });

    const paid = json(face, { headers: { "payment-signature": payment } });
    for (let i = 0; i < 200 && origin.callsTo(`/slow/${ORIGIN_DELAY_MS}`).length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(origin.callsTo(`/slow/${ORIGIN_DELAY_MS}`)).toHaveLength(1);

    const exited = new Promise<{ code: number | null; afterMs: number }>((resolve) => {
      const sentAt = Date.now();
      child!.once("exit", (code) => resolve({ code, afterMs: Date.now() - sentAt }));
    });
    child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 200));
    // Mid-drain: a new client is refused at the socket, never answered with a 5xx.
    expect(await freshRequest(`${base}/health`)).toBe("ECONNREFUSED");

    const answer = await paid;
    expect(answer.status).toBe(200);
    expect(answer.body.fulfillment.payload).toEqual({ slow: true });
    const paymentId = answer.body.receipt.id;
    expect(paymentId).toMatch(/^pay_/);
    const { code, afterMs } = await exited;
    expect(code).toBe(0);
    expect(afterMs).toBeLessThan(20_000);

    // Restarted on the same data: the sale is in the books once, and the same payment redelivers it.
    child = startProcess(port, dataDir);
    await waitUntilHealthy(base, child, 60_000);
    const ledger = await json(`${base}/v1/receipts?test_mode=true`, { headers: auth });
    expect(ledger.body.receipts.map((r: { id: string }) => r.id)).toEqual([paymentId]);
    const again = await json(face, { headers: { "payment-signature": payment } });
    expect(again.status).toBe(200);
    expect(again.body.receipt.id).toBe(paymentId);
    expect(origin.callsTo(`/slow/${ORIGIN_DELAY_MS}`)).toHaveLength(1);
    const stopped = new Promise((r) => child!.once("exit", r));
    child.kill("SIGTERM");
    await stopped;
  }, 120_000);
});
