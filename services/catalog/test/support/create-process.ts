import type { CreateRequest } from "../../src/domain/catalog";

/** The JSON argument of test/fixtures/create-process.ts. */
export interface CreateProcessInput {
  databaseUrl: string;
  schema: string;
  /** The create, with its idempotency key. */
  request: CreateRequest;
  /** The process's clock, ISO. */
  now: string;
}

/** The fixture's one line of output: `CREATE_RESULT {json}` on stdout. */
export const CREATE_RESULT_PREFIX = "CREATE_RESULT ";
