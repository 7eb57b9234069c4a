import { framingOriginOf, framingOriginRefusal, framingOrigins } from "../src";

/** The one rule for an origin named in `frame-ancestors`: the embed allowlist and an article's canonical URL both follow it. */
describe("framing origins", () => {
  const refusal = (value: string) => framingOriginRefusal(new URL(value));

  it("accepts one site: https anywhere, plain http on localhost or a loopback address, a path being no part of the origin", () => {
    for (const value of [
      "https://shop.example",
      "https://blog.example/post/1?x=1#top",
      "https://shop.example:8443/",
      "https://xn--bcher-kva.example",
      "https://bücher.example",
      "https://1.2.3.4",
      "http://localhost:3000/x",
      "http://127.0.0.1:5173",
      "http://[::1]:8080",
    ]) {
      expect({ value, refusal: refusal(value) }).toEqual({ value, refusal: undefined });
    }
  });

  it("refuses a wildcard anywhere in the host, however it is written", () => {
    for (const value of [
      "https://*/",
      "https://*.example.com/a",
      "http://*.localhost/",
      "https://%2A.example.com/",
      "https://shop*.example/",
      "https://*:8443/",
    ]) {
      expect({ value, refusal: refusal(value) }).toEqual({ value, refusal: "must name one site: wildcards are refused" });
    }
  });

  it("refuses plain http off loopback, other schemes, credentials and hosts a policy cannot name", () => {
    for (const value of [
      "http://example.com/",
      "http://10.0.0.1/",
      "http://localhost.example/",
      "ws://shop.example",
      "ftp://shop.example",
      "data:text/html,x",
      "https://user:pw@shop.example/",
      "https://user@shop.example/",
      "https://a;b.example/",
      "https://a,b.example/",
      "https://a'b.example/",
      "https://[2001:db8::1]/",
    ]) {
      expect({ value, refusal: refusal(value) }).toEqual({ value, refusal: expect.any(String) });
    }
  });

  it("the origin a URL may frame from, or none; a list keeps the accepted origins, each once", () => {
    expect(framingOriginOf("https://Blog.Example:443/post/1")).toBe("https://blog.example");
    expect(framingOriginOf("http://localhost:3000/x")).toBe("http://localhost:3000");
    for (const value of ["https://*/", "https://*.example.com", "http://example.com", "not a url", "", "https://u:p@blog.example"]) {
      expect({ value, origin: framingOriginOf(value) }).toEqual({ value, origin: undefined });
    }
    expect(
      framingOrigins(["https://shop.example", "https://*", null, "https://blog.example/a", undefined, "https://shop.example/", "https://*.shop.example", "x"]),
    ).toEqual(["https://shop.example", "https://blog.example"]);
    expect(framingOrigins([])).toEqual([]);
  });
});
