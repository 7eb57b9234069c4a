/**
 * Conventions the OpenAPI document applies to every operation, whoever wrote
 * it, so a new route cannot miss them: each operation has an `operationId`
 * (the one it names, or one derived from its method and path). Their
 * uniqueness, and the document's validity as OpenAPI 3.1, are checked by
 * services/gateway/test/openapi-document.test.ts.
 */

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

const pascal = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

/**
 * `<method><Path>` in camelCase: `/v1` is dropped (every seller path has it),
 * a path parameter reads `By<Name>`, other characters split words:
 * GET /v1/checkouts/{id}/go-live → getCheckoutsByIdGoLive, GET / → getRoot.
 */
export function derivedOperationId(method: string, path: string): string {
  const words = path
    .split("/")
    .filter((segment, i) => segment !== "" && !(i === 1 && segment === "v1"))
    .flatMap((segment) => {
      const param = /^\{(.+)\}$/.exec(segment)?.[1];
      const parts = (param ?? segment)
        .split(/[^A-Za-z0-9]+/)
        .filter(Boolean)
        .map(pascal);
      return param === undefined ? parts : ["By", ...parts];
    });
  return `${method.toLowerCase()}${words.length ? words.join("") : "Root"}`;
}

type Paths = Record<string, Record<string, unknown>>;

/** The document with an operationId on every operation that names none. */
export function withOperationIds<D extends { paths: Paths }>(doc: D): D {
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method] as Record<string, unknown> | undefined;
      if (op && typeof op.operationId !== "string") item[method] = { operationId: derivedOperationId(method, path), ...op };
    }
  }
  return doc;
}
