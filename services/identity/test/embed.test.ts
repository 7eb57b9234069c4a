import { embedOriginOf, validateEmbedOrigins } from "../src/domain/embed";

/** The embed origin rules (spec, Embedding); test-e2e/test/embed-settings.test.ts drives them over HTTP, MCP and a real browser. */
describe("embed origins", () => {
  it("keeps origins only, normalised: https anywhere, http on loopback; ports kept, default ports dropped", () => {
    const ok: [string, string][] = [
      ["https://shop.example", "https://shop.example"],
      ["https://Shop.EXAMPLE/", "https://shop.example"],
      ["https://shop.example:443", "https://shop.example"],
      ["https://shop.example:8443", "https://shop.example:8443"],
      ["http://localhost:5173", "http://localhost:5173"],
      ["http://127.0.0.1:3000", "http://127.0.0.1:3000"],
      ["http://[::1]:8080", "http://[::1]:8080"],
      ["https://xn--bcher-kva.example", "https://xn--bcher-kva.example"],
    ];
    for (const [value, origin] of ok) expect({ value, r: embedOriginOf(value) }).toEqual({ value, r: { origin } });
  });

  it("refuses wildcards, plain http elsewhere, paths, queries, fragments, credentials, other schemes and spaces", () => {
    for (const value of [
      "*",
      "https://*.shop.example",
      "http://shop.example",
      "http://10.0.0.1",
      "https://shop.example/embed",
      "https://shop.example?x",
      "https://shop.example/#x",
      "https://u:p@shop.example",
      "ws://shop.example",
      "data:text/html,x",
      "shop.example",
      " https://shop.example",
      "https://shop.example\n",
      `https://${"a".repeat(200)}.example`,
    ]) {
      expect({ value, r: embedOriginOf(value) }).toEqual({ value, r: { refusal: expect.any(String) } });
    }
  });

  it("a list keeps each origin once, in order, and names every refused entry", () => {
    expect(validateEmbedOrigins(["https://b.example", "https://A.example", "https://b.example/"])).toEqual(["https://b.example", "https://a.example"]);
    expect(() => validateEmbedOrigins(["https://ok.example", "http://no.example", "*"])).toThrow(
      expect.objectContaining({
        errors: [
          { field: "embed_origins[1]", reason: expect.any(String) },
          { field: "embed_origins[2]", reason: expect.any(String) },
        ],
      }),
    );
    expect(() => validateEmbedOrigins(Array.from({ length: 21 }, (_, i) => `https://s${i}.example`))).toThrow(
      expect.objectContaining({ errors: [expect.objectContaining({ field: "embed_origins" })] }),
    );
  });
});
