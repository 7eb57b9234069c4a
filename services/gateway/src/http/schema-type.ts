/**
 * The TypeScript type of the values a JSON Schema (declared `as const`)
 * accepts, so that a request body's type is read off the schema that
 * validates it and is never declared twice. It covers the keywords the
 * request schemas use: `type` (one name), `enum`, `anyOf`, `properties` with
 * `required`, `items`, and `additionalProperties` as a schema; annotations
 * (`description`, bounds, `pattern`) narrow nothing. Properties not in
 * `required` are optional.
 */
export type FromSchema<S> = S extends { readonly anyOf: readonly (infer Branch)[] }
  ? FromSchema<Branch>
  : S extends { readonly enum: readonly (infer Value)[] }
    ? Value
    : S extends { readonly type: "string" }
      ? string
      : S extends { readonly type: "integer" | "number" }
        ? number
        : S extends { readonly type: "boolean" }
          ? boolean
          : S extends { readonly type: "null" }
            ? null
            : S extends { readonly type: "array"; readonly items: infer Items }
              ? FromSchema<Items>[]
              : S extends { readonly type: "array" }
                ? unknown[]
                : S extends { readonly type: "object"; readonly properties: infer Properties }
                  ? ObjectOf<Properties, S extends { readonly required: readonly (infer Required)[] } ? Required : never>
                  : S extends { readonly type: "object"; readonly additionalProperties: infer Values extends object }
                    ? Record<string, FromSchema<Values>>
                    : S extends { readonly type: "object" }
                      ? Record<string, unknown>
                      : unknown;

type ObjectOf<Properties, Required> = Flatten<
  { -readonly [K in keyof Properties & Required]: FromSchema<Properties[K]> } & {
    -readonly [K in Exclude<keyof Properties, Required>]?: FromSchema<Properties[K]>;
  }
>;

/** One object type instead of an intersection, for readable hovers and errors. */
type Flatten<T> = { [K in keyof T]: T[K] };
