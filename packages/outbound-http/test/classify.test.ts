import fc from "fast-check";
import { classifyAddress, classifyHost, isClassAllowed, parseIPv4Loose } from "../src";
import { NON_PUBLIC_V4, V4_BARE_ENCODERS, V4_ENCODERS, inRange, toNumber } from "@c402/testkit/outbound-lab";
import { blockedCorpus } from "@c402/testkit/outbound-lab";
import { installConnectSpy } from "@c402/testkit/outbound-lab";

/** Target G18: the pure classifier blocks the whole corpus, and opens no socket doing so. */
const spy = installConnectSpy();
afterAll(() => spy.restore());

const DEFAULT = { allowLoopback: false, allowPrivate: false };
const isBlockedHost = (host: string) => {
  const cls = classifyHost(host);
  return cls !== "public" && cls !== "name" && !isClassAllowed(cls, DEFAULT);
};

describe("G18 blocked corpus", () => {
  const corpus = blockedCorpus();

  it("has at least 500 distinct address strings", () => {
    expect(new Set(corpus).size).toBe(corpus.length);
    expect(corpus.length).toBeGreaterThanOrEqual(500);
  });

  it("is 100% blocked by classifyHost with allowLoopback false", () => {
    const leaks = corpus.filter((host) => !isBlockedHost(host)).map((host) => `${host} → ${classifyHost(host)}`);
    expect(leaks).toEqual([]);
  });

  it("opened no socket", () => {
    expect(spy.records).toEqual([]);
  });
});

describe("classifyAddress", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["::1", "loopback"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["0177.0.0.1", "loopback"],
    ["10.1.2.3", "private"],
    ["172.31.0.1", "private"],
    ["192.168.10.1", "private"],
    ["fc00::1", "private"],
    ["fd12:3456::1", "private"],
    ["fec0::1", "private"],
    ["169.254.169.254", "metadata"],
    ["::ffff:169.254.169.254", "metadata"],
    ["fd00:ec2::254", "metadata"],
    ["100.100.100.200", "metadata"],
    ["169.254.1.1", "link-local"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["100.64.0.1", "cgnat"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["::", "unspecified"],
    ["224.0.0.251", "multicast"],
    ["ff02::fb", "multicast"],
    ["255.255.255.255", "reserved"],
    ["240.1.2.3", "reserved"],
    ["198.18.5.5", "reserved"],
    ["192.0.2.1", "reserved"],
    ["2001:db8::1", "reserved"],
    ["64:ff9b::10.0.0.1", "private"],
    ["64:ff9b::8.8.8.8", "public"],
    ["2002:7f00:1::", "loopback"],
    ["2002:808:808::1", "public"],
    ["2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback"],
    ["8.8.8.8", "public"],
    ["::ffff:8.8.8.8", "public"],
    ["2606:4700:4700::1111", "public"],
    ["2620:4f:8000::1", "public"],
    ["not-an-ip", "invalid"],
    ["::ffff:0177.0.0.1", "invalid"],
    ["1.2.3.4.5", "invalid"],
    ["", "invalid"],
  ])("%s is %s", (ip, cls) => {
    expect(classifyAddress(ip)).toBe(cls);
  });
});

describe("classifyHost", () => {
  it.each([
    ["example.com", "name"],
    ["api.example.com.", "name"],
    ["127.0.0.1.nip.io", "name"], // resolves to loopback: caught at connect time, see guard.test.ts
    ["xn--nxasmq6b.example", "name"],
    ["localhost", "loopback"],
    ["app.localhost.", "loopback"],
    ["metadata.google.internal", "metadata"],
    ["anything.internal", "private"],
    ["printer.local", "private"],
    ["intranet", "private"],
    ["2130706433", "loopback"],
    ["0x7f.1", "loopback"],
    ["[::1]", "loopback"],
    ["[fe80::1%25eth0]", "link-local"],
    ["8.8.8.8", "public"],
    ["134744072", "public"],
    ["[2606:4700:4700::1111]", "public"],
    ["a b", "invalid"],
    ["evil.example@127.0.0.1", "invalid"],
  ])("%s is %s", (host, cls) => {
    expect(classifyHost(host)).toBe(cls);
  });

  it("allows public addresses just outside every blocked range", () => {
    const edges = [
      "8.8.8.8",
      "1.1.1.1",
      "9.255.255.255",
      "11.0.0.0",
      "126.255.255.255",
      "128.0.0.0",
      "172.15.255.255",
      "172.32.0.0",
      "192.167.255.255",
      "192.169.0.0",
      "100.63.255.255",
      "100.128.0.0",
      "169.253.255.255",
      "169.255.0.0",
      "198.17.255.255",
      "198.20.0.0",
      "192.0.1.255",
      "192.0.3.0",
      "223.255.255.255",
      "1.0.0.0",
    ];
    for (const ip of edges) expect([ip, classifyHost(ip)]).toEqual([ip, "public"]);
  });
});

describe("parseIPv4Loose", () => {
  it("reads every WHATWG/inet_aton form", () => {
    for (const s of ["127.0.0.1", "2130706433", "0x7f000001", "017700000001", "0177.0.0.1", "0x7f.1", "127.1", "127.0.1", "127.0.0.1."]) {
      expect([s, parseIPv4Loose(s)]).toEqual([s, 2130706433]);
    }
    for (const s of ["127.0.0.256", "1.2.3.4.5", "0x1.0x2.0x3.0x100", "08.0.0.1", "", ".", "1..2", "4294967296"]) {
      expect([s, parseIPv4Loose(s)]).toEqual([s, null]);
    }
  });
});

describe("G18 properties", () => {
  const nonPublic = fc
    .constantFrom(...NON_PUBLIC_V4)
    .chain((range) => fc.integer({ min: 0, max: 2 ** (32 - range[1]) - 1 }).map((offset) => toNumber(range[0]) + offset));
  const publicV4 = fc.integer({ min: 0, max: 2 ** 32 - 1 }).filter((n) => !NON_PUBLIC_V4.some((r) => inRange(n, r)));
  const hostEncoding = fc.constantFrom(...Object.entries(V4_ENCODERS));
  const bareEncoding = fc.constantFrom(...Object.entries(V4_BARE_ENCODERS));

  it("a random non-public IPv4 address in any URL encoding is blocked", () => {
    fc.assert(
      fc.property(nonPublic, hostEncoding, (n, [, encode]) => isBlockedHost(encode(n))),
      { numRuns: 2000 },
    );
  });

  it("a random non-public IPv4 address in any resolver-answer form is blocked", () => {
    fc.assert(
      fc.property(nonPublic, bareEncoding, (n, [, encode]) => !isClassAllowed(classifyAddress(encode(n)), DEFAULT)),
      { numRuns: 1000 },
    );
  });

  it("a random public IPv4 address is public in every encoding", () => {
    fc.assert(
      fc.property(publicV4, hostEncoding, (n, [, encode]) => classifyHost(encode(n)) === "public"),
      { numRuns: 2000 },
    );
  });

  it("random unique-local, link-local, site-local and multicast IPv6 addresses are blocked", () => {
    const prefix = fc.constantFrom(0xfc00, 0xfd00, 0xfe80, 0xfebf, 0xfec0, 0xff00, 0xff0e);
    const rest = fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 7, maxLength: 7 });
    fc.assert(
      fc.property(prefix, fc.integer({ min: 0, max: 0x3f }), rest, (p, low, parts) => {
        const first = (p | (p === 0xfe80 || p === 0xfec0 ? low : low & 0xff)).toString(16);
        return isBlockedHost(`[${[first, ...parts.map((x) => x.toString(16))].join(":")}]`);
      }),
      { numRuns: 1000 },
    );
  });

  it("random global unicast IPv6 addresses outside special ranges are public", () => {
    const first = fc.integer({ min: 0x2400, max: 0x2fff });
    const rest = fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 7, maxLength: 7 });
    fc.assert(
      fc.property(first, rest, (a, parts) => classifyHost(`[${[a, ...parts].map((x) => x.toString(16)).join(":")}]`) === "public"),
      { numRuns: 1000 },
    );
  });
});
