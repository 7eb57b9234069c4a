import { DATABASE, type ServiceEntry } from "@c402/topology";
import { comment, GENERATED } from "./text";

/** The development password of a service's role in compose (provision.sql and the compose DATABASE_URLs must agree). */
export function devPassword(service: ServiceEntry): string {
  return `${service.name}-dev-password`;
}

/** deploy/docker/provision.sql: one login role and one schema per service, the layout deploy/local/src/provision.ts creates. */
export function provisionSql(services: readonly ServiceEntry[]): string {
  const roleWidth = Math.max(...services.map((s) => s.database.role.length));
  const schemaWidth = Math.max(...services.map((s) => s.database.schema.length));
  return [
    comment(
      "--",
      GENERATED,
      "",
      "Distributed-mode database layout for docker-compose: one login role and one",
      "schema per service, each schema owned by its role, so no service can read or",
      "write another's tables. The same layout deploy/local/src/provision.ts creates.",
      "",
      `The postgres image runs this once, on an empty data volume, as POSTGRES_USER`,
      `connected to POSTGRES_DB (${DATABASE}), with ON_ERROR_STOP. To apply a change, remove`,
      "the volume: `docker compose -f deploy/docker/docker-compose.yml down -v`.",
      "",
      "DEVELOPMENT PASSWORDS ONLY. They match the DATABASE_URLs in",
      "docker-compose.yml. Never reuse them anywhere reachable from outside.",
    ),
    "",
    ...services.map((s) => `CREATE ROLE ${s.database.role.padEnd(roleWidth)} LOGIN PASSWORD '${devPassword(s)}';`),
    "",
    `GRANT CONNECT ON DATABASE ${DATABASE} TO ${services.map((s) => s.database.role).join(", ")};`,
    "",
    "-- Nobody creates objects in public (PostgreSQL 15 already defaults to this; kept explicit).",
    "REVOKE CREATE ON SCHEMA public FROM PUBLIC;",
    "",
    ...services.map((s) => `CREATE SCHEMA IF NOT EXISTS ${s.database.schema.padEnd(schemaWidth)} AUTHORIZATION ${s.database.role};`),
    "",
  ].join("\n");
}
