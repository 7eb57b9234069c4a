import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { describeWith, freshPostgresDatabase } from "@c402/testkit";
import { entryFile, SERVICES } from "@c402/topology";
import pg from "pg";

/**
 * The migration Jobs' command (k8s/base/jobs.yaml): each service's entry file
 * with --migrate brings its schema up to date on a real PostgreSQL and exits,
 * given nothing but DATABASE_URL; again, it changes nothing; a database it
 * cannot reach makes it exit 1.
 */
const root = resolve(__dirname, "../../..");

function migrateOnly(service: string, databaseUrl: string) {
  return new Promise<{ code: number; stderr: string }>((done) =>
    execFile(
      process.execPath,
      ["--import", "tsx", join(root, entryFile(service)), "--migrate"],
      // Only what a migration Job gets: no Kafka, no gRPC port, no service secrets.
      { cwd: root, env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl, LOG_LEVEL: "warn" } },
      (err, _stdout, stderr) => done({ code: err ? Number(err.code) : 0, stderr }),
    ),
  );
}

describeWith("postgres")("migration Jobs (entry file --migrate)", () => {
  let database: { url: string; drop(): Promise<void> };
  beforeAll(async () => {
    database = await freshPostgresDatabase();
  });
  afterAll(() => database.drop());

  const applied = async (schema: string) => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      return (await client.query(`select name from ${schema}.kysely_migration order by name`)).rows.map((r: { name: string }) => r.name);
    } finally {
      await client.end();
    }
  };

  it("brings every service's schema up to date and exits 0, then again changes nothing", async () => {
    for (const s of SERVICES) {
      expect({ service: s.name, ...(await migrateOnly(s.name, database.url)) }).toEqual({ service: s.name, code: 0, stderr: "" });
      const first = await applied(s.database.schema);
      expect(first.length).toBeGreaterThan(0);
      expect({ service: s.name, ...(await migrateOnly(s.name, database.url)) }).toEqual({ service: s.name, code: 0, stderr: "" });
      expect(await applied(s.database.schema)).toEqual(first);
    }
  }, 120_000);

  it("exits 1 when the database cannot be reached", async () => {
    const refused = await migrateOnly("webhooks", "postgres://nobody@127.0.0.1:1/none");
    expect(refused.code).toBe(1);
  }, 30_000);
});
