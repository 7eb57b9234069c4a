import { execFile } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "../../src/ports";

const run = promisify(execFile);

/**
 * A PostgreSQL server of a test's own (initdb into a temporary directory,
 * trust auth, loopback only, a free port), to stop and start under load.
 * Run as the `postgres` user when this process is root (initdb refuses root).
 */
export interface OwnPostgres {
  /** The superuser's URL (database `postgres`). */
  adminUrl: string;
  /** Fast shutdown (open sessions are cut, nothing lost), `downMs` with no server, then a start on the same data. */
  restart(downMs: number): Promise<void>;
  /** Stops it and deletes its data. */
  stop(): Promise<void>;
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const bin = postgresBinDir();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "c402-pg-drill-"));
  const data = join(dir, "data");
  const owner = process.getuid?.() === 0 ? await uidOf("postgres") : undefined;
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const as = (cmd: string, args: string[]) => run(join(bin, cmd), args, { ...(owner ?? {}), cwd: dir, timeout: 120_000 });
  await as("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c max_connections=200`;
  const start = () => as("pg_ctl", ["-D", data, "-o", options, "-l", join(dir, "postgres.log"), "-w", "-t", "60", "start"]);
  const stop = () => as("pg_ctl", ["-D", data, "-m", "fast", "-w", "-t", "60", "stop"]);
  await start();
  return {
    adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async restart(downMs) {
      await stop();
      await new Promise((r) => setTimeout(r, downMs));
      await start();
    },
    async stop() {
      await stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** POSTGRES_BIN_DIR, else the newest /usr/lib/postgresql/<version>/bin that holds initdb (Debian's layout). */
function postgresBinDir(): string {
  if (process.env.POSTGRES_BIN_DIR) return process.env.POSTGRES_BIN_DIR;
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, "bin", "initdb"))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (!newest) throw new Error(`no initdb under ${root}/<version>/bin: set POSTGRES_BIN_DIR`);
  return join(root, newest, "bin");
}

async function uidOf(user: string): Promise<{ uid: number; gid: number }> {
  const [uid, gid] = await Promise.all([run("id", ["-u", user]), run("id", ["-g", user])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}
