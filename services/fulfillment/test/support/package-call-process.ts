/** The JSON argument of test/fixtures/package-call-process.ts: one package call against a package already bought. */
export interface PackageCallProcessInput {
  databaseUrl: string;
  schema: string;
  keyringText: string;
  checkoutId: string;
  packageKey: string;
  params: Record<string, string>;
}

/** The process's one line of output when it was not killed: `PACKAGE_CALL {json}`. */
export const PACKAGE_CALL_PREFIX = "PACKAGE_CALL ";
