import { serviceNamed, SERVICES } from "@c402/topology";
import pg from "pg";

/**
 * Creates the database (when missing), one login role per service of the list
 * (packages/topology) and one schema owned by that role, so no service can read
 * another's tables. deploy/docker/provision.sql is the same layout, generated.
 * `passwords` is keyed by service name.
 */
export async function provision(adminUrl: string, database: string, passwords: Record<string, string>): Promise<void> {
  if (!/^[a-z][a-z0-9_]{0,62}$/.test(database)) throw new Error(`invalid database name ${database}`);
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const exists = await admin.query("select 1 from pg_database where datname = $1", [database]);
    if (exists.rowCount === 0) await admin.query(`create database ${database}`);
    for (const s of SERVICES) {
      const role = s.database.role;
      const pw = (passwords[s.name] ?? "").replace(/'/g, "''");
      const r = await admin.query("select 1 from pg_roles where rolname = $1", [role]);
      if (r.rowCount === 0) await admin.query(`create role ${role} login password '${pw}'`);
      else await admin.query(`alter role ${role} login password '${pw}'`);
      await admin.query(`grant connect on database ${database} to ${role}`);
    }
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  const db = new pg.Client({ connectionString: url.toString() });
  await db.connect();
  try {
    await db.query("revoke create on schema public from public");
    for (const s of SERVICES) await db.query(`create schema if not exists ${s.database.schema} authorization ${s.database.role}`);
  } finally {
    await db.end();
  }
}

export function serviceDatabaseUrl(adminUrl: string, database: string, service: string, password: string): string {
  const url = new URL(adminUrl);
  url.username = serviceNamed(service).database.role;
  url.password = password;
  url.pathname = `/${database}`;
  return url.toString();
}

export async function dropDatabase(adminUrl: string, database: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${database} with (force)`);
  } finally {
    await admin.end();
  }
}
