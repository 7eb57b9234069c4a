import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeWith, INFRA_ENV } from "@c402/testkit";
import { startFakeOrigin, type FakeOrigin } from "@c402/testkit/fake-origin";
import { startWebhookReceiver, type WebhookReceiver } from "@c402/testkit/webhook-receiver";
import { startLocalCluster, type ClusterProcess, type LocalCluster, type ProcessExit } from "../src/cluster";
import { freePort } from "../src/ports";
import { dropDatabase } from "../src/provision";
import { clusterEnvironment, openShop, salesKinds, startTraffic, tally, unexpectedAnswers, type TrafficResult } from "./load/paid-traffic";
import { expectEverySaleRecordedOnce } from "./load/sales-audit";

/**
 * G36 for the distributed processes: two replicas of every service and of the
 * gateway (as the production overlay runs them), buyers paying without pause
 * (load/paid-traffic.ts), and a rollout that sends SIGTERM to one process after another (ROLLOUT_RESTARTS, default
 * 20: every process at least once), each started again once it stopped. No
 * request a server accepted may end in a 5xx or a dropped connection; every
 * payment answered is settled once, with one event, delivered to the seller's
 * webhook; nothing is left unpublished in any outbox (load/sales-audit.ts).
 */
const RESTARTS = Number(process.env.ROLLOUT_RESTARTS ?? 20);
const BUYERS = 4;
/** The devchain account that mints the live buyers' USDC (the failure drills use another). */
const MINTER_INDEX = 7;

describeWith("postgres")("rolling restart of every distributed process under load (G36)", () => {
  let cluster: LocalCluster | undefined;
  let origin: FakeOrigin;
  let receiver: WebhookReceiver;
  let dataDir: string;
  const adminUrl = process.env[INFRA_ENV.postgres] ?? "postgres://postgres@127.0.0.1:5432/postgres";
  const database = `c402_rollout_${process.pid}`;
  const unexpected: string[] = [];

  beforeAll(async () => {
    origin = await startFakeOrigin();
    receiver = await startWebhookReceiver();
    dataDir = mkdtempSync(join(tmpdir(), "c402-rollout-"));
    cluster = await startLocalCluster({
      adminUrl,
      database,
      kafkaBrokers: process.env[INFRA_ENV.kafka] ?? "127.0.0.1:19092",
      redisUrl: process.env[INFRA_ENV.redis] ?? "redis://127.0.0.1:6379",
      gatewayPort: await freePort(),
      replicas: 2,
      logDir: join(dataDir, "logs"),
      env: clusterEnvironment(dataDir),
      onUnexpectedExit: (p, code, signal) => unexpected.push(`${p.name}.${p.replica} exited by itself (${code ?? signal})`),
    });
  }, 240_000);

  afterAll(async () => {
    await cluster?.stop();
    await dropDatabase(adminUrl, database).catch(() => undefined);
    await origin?.close();
    await receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("SIGTERM to each process in turn while buyers pay: no accepted request gets a 5xx or is dropped; every payment settles once, with one event", async () => {
    const c = cluster as LocalCluster;
    const shop = await openShop(c, c.gatewayUrls[0] as string, { receiver, origin }, { buyers: BUYERS, minterIndex: MINTER_INDEX });
    const kinds = salesKinds(shop);
    const traffic = startTraffic({ gateways: c.gatewayUrls, kinds, buyers: BUYERS });

    // The rollout: one process after another (services and gateways interleaved, so the two
    // replicas of one service are never both starting), each SIGTERMed and started again.
    const order = [...c.processes].sort((a, b) => a.replica - b.replica);
    const stops: { process: string; exit: ProcessExit }[] = [];
    let result: TrafficResult;
    try {
      await new Promise((r) => setTimeout(r, 2_000));
      for (let i = 0; i < RESTARTS; i++) {
        const target = order[i % order.length] as ClusterProcess;
        stops.push({ process: `${target.name}.${target.replica}`, exit: await c.restart(target) });
        await new Promise((r) => setTimeout(r, 1_000));
      }
      await new Promise((r) => setTimeout(r, 2_000));
    } finally {
      result = await traffic.stop();
    }

    expect(unexpected).toEqual([]);
    // Each process stopped on its own, cleanly, well inside Kubernetes' 30 s grace.
    for (const s of stops)
      expect({ process: s.process, code: s.exit.code, signal: s.exit.signal, inGrace: s.exit.stopMs < 25_000 }).toEqual({
        process: s.process,
        code: 0,
        signal: null,
        inGrace: true,
      });
    const faults = [...result.faults, ...unexpectedAnswers(result.answers, kinds)];
    expect({ faults: faults.length, first: faults.slice(0, 5) }).toEqual({ faults: 0, first: [] });
    expect(result.paid.length).toBeGreaterThan(RESTARTS * 2);
    for (const kind of ["rehearsal", "relay", "live"]) expect(result.paid.filter((p) => p.kind === kind).length).toBeGreaterThan(0);

    await expectEverySaleRecordedOnce(
      new URL(`/${database}`, adminUrl).toString(),
      receiver,
      result.paid.map((p) => p.paymentId),
    );
    process.stdout.write(
      `rollout: ${stops.length} SIGTERMs, ${result.paid.length} payments, ${result.refused} refused connections retried; ${JSON.stringify(tally(result.answers))}\n`,
    );
  }, 900_000);
});
