import { EmbeddedPostgres, openPostgres, type ServiceDatabase } from "@c402/db";
import { describeWith, freshPostgresDatabase } from "./infra";

/** A service's schema for one test file, and how to drop it afterwards. */
export interface TestDatabase {
  database: ServiceDatabase;
  close(): Promise<void>;
}

/**
 * Runs the same contract on both databases a service meets: the embedded
 * PGlite of embedded mode, and (when a PostgreSQL is available to the run) a
 * fresh PostgreSQL database, dropped afterwards. `title` names the contract;
 * each describe block adds which database it ran on.
 */
export function describeOnEachDatabase(title: string, schema: string, contract: (open: () => Promise<TestDatabase>) => void): void {
  describe(`${title} on embedded PostgreSQL`, () => {
    contract(async () => {
      const pg = await EmbeddedPostgres.open();
      return { database: pg.forSchema(schema), close: () => pg.close() };
    });
  });
  describeWith("postgres")(`${title} on PostgreSQL`, () => {
    contract(async () => {
      const fresh = await freshPostgresDatabase();
      const database = openPostgres({ url: fresh.url, schema });
      return {
        database,
        async close() {
          await database.close();
          await fresh.drop();
        },
      };
    });
  });
}
