import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { freePort } from "../../src/ports";

const run = promisify(execFile);
const KAFKA_SH = resolve(__dirname, "../../../kafka/kafka.sh");

/**
 * A Kafka broker of a test's own (deploy/kafka/kafka.sh on free loopback
 * ports with a data dir of its own), to kill and start again on the same data.
 */
export interface OwnKafka {
  brokers: string;
  /** kill -9 of the broker's JVM (no controlled shutdown, nothing flushed), and wait until it is gone. */
  kill(): Promise<void>;
  /** Starts it again on the same data dir; resolves once it answers admin requests. */
  start(): Promise<void>;
  /** Stops it and deletes its data. */
  stop(): Promise<void>;
}

export async function startOwnKafka(): Promise<OwnKafka> {
  const [port, controllerPort, securePort] = [await freePort(), await freePort(), await freePort()];
  const parent = mkdtempSync(join(tmpdir(), "c402-kafka-drill-"));
  // A subdirectory: kafka.sh keeps its lock file beside the data dir.
  const dataDir = join(parent, "broker");
  // Set in full: CI exports KAFKA_PORT and KAFKA_CLEAN=1 for its own broker.
  const env = (clean: boolean) => ({
    ...process.env,
    KAFKA_PORT: String(port),
    KAFKA_CONTROLLER_PORT: String(controllerPort),
    KAFKA_SECURE_PORT: String(securePort),
    KAFKA_DATA_DIR: dataDir,
    KAFKA_CLEAN: clean ? "1" : "0",
    KAFKA_HEAP: "384m",
  });
  const kafkaSh = (command: string, clean = false) => run("bash", [KAFKA_SH, command], { env: env(clean), timeout: 180_000 });
  await kafkaSh("start", true);
  return {
    brokers: `127.0.0.1:${port}`,
    async kill() {
      const pid = Number(readFileSync(join(dataDir, "kafka.pid"), "utf8").trim());
      process.kill(pid, "SIGKILL");
      while (alive(pid)) await new Promise((r) => setTimeout(r, 100));
    },
    async start() {
      await kafkaSh("start");
    },
    async stop() {
      await kafkaSh("clean");
      rmSync(parent, { recursive: true, force: true });
    },
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
