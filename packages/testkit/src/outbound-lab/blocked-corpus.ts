import { NON_PUBLIC_V4, V4_ENCODERS, toNumber } from "./address-encodings";

/** Target G18's corpus: URL hosts that must never be reachable with the default policy. */

// Addresses worth writing in every encoding: range edges, the metadata endpoints, the favourites.
const V4_BASES = [
  "127.0.0.1",
  "127.0.0.2",
  "127.1.2.3",
  "127.255.255.254",
  "10.0.0.1",
  "10.10.10.10",
  "10.255.255.255",
  "172.16.0.1",
  "172.20.30.40",
  "172.31.255.254",
  "192.168.0.1",
  "192.168.1.1",
  "192.168.255.255",
  "169.254.169.254",
  "169.254.170.2",
  "169.254.0.1",
  "169.254.255.255",
  "100.64.0.1",
  "100.100.100.200",
  "100.127.255.254",
  "0.0.0.0",
  "0.1.2.3",
  "198.18.0.1",
  "198.19.255.255",
  "192.0.2.1",
  "198.51.100.7",
  "203.0.113.9",
  "192.0.0.8",
  "192.88.99.1",
  "224.0.0.1",
  "239.255.255.250",
  "240.0.0.1",
  "255.255.255.255",
];

// Hand-written: names, IPv6 forms, zone ids, oddities.
const TRICKY = [
  "localhost",
  "LOCALHOST",
  "localhost.",
  "localhost..",
  "foo.localhost",
  "a.b.localhost.",
  "metadata.google.internal",
  "METADATA.GOOGLE.INTERNAL.",
  "metadata",
  "metadata.goog",
  "instance-data",
  "instance-data.ec2.internal",
  "db.internal",
  "vault.service.internal.",
  "kubernetes.default.svc.cluster.local",
  "printer.local",
  "router.home.arpa",
  "nas.localdomain",
  "intranet",
  "0",
  "0x0",
  "00",
  "0x",
  "0.0.0.0.",
  "127.1.",
  "0x7f.1",
  "0177.1",
  "127.000.000.001",
  "0000177.0.0.1",
  "0x7F.0X0.0.1",
  "127.0x0.0.01",
  "4294967295",
  "0xffffffff",
  "①②⑦.⓪.⓪.①",
  "0x100000000",
  "4294967296",
  "256.0.0.1",
  "1.2.3.4.5",
  "0x7f00.1",
  "127.0.0.1:80",
  "127.0.0.1%2f",
  "evil.example@127.0.0.1",
  "",
  "::1",
  "[::1]",
  "0:0:0:0:0:0:0:1",
  "[0000:0000:0000:0000:0000:0000:0000:0001]",
  "[::0:1]",
  "::",
  "[::]",
  "[0::0]",
  "[::ffff:10.0.0.1]",
  "[::ffff:a00:1]",
  "[::ffff:169.254.169.254]",
  "[::ffff:a9fe:a9fe]",
  "[::FFFF:7F00:1]",
  "[::ffff:0177.0.0.1]",
  "[::ffff:127.1]",
  "[::ffff:0:127.0.0.1]",
  "[::127.0.0.1]",
  "[::7f00:1]",
  "[::a00:1]",
  "fe80::1%eth0",
  "[fe80::1%25eth0]",
  "fe80::1",
  "[fe80::abcd:1234]",
  "[febf:ffff::1]",
  "fc00::",
  "fc00::1",
  "fd00::1",
  "[fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]",
  "fec0::1",
  "[feff::1]",
  "ff02::1",
  "[ff05::1:3]",
  "[64:ff9b::a00:1]",
  "64:ff9b::7f00:1",
  "[64:ff9b::169.254.169.254]",
  "[64:ff9b:1::a00:1]",
  "[2002:7f00:1::]",
  "[2002:a00:1::1]",
  "[2002:c0a8:101::]",
  "[2002:a9fe:a9fe::]",
  "[2001:0:4136:e378:8000:63bf:80ff:fffe]", // Teredo, client 127.0.0.1
  "[2001:0:4136:e378:8000:63bf:f5ff:fffe]", // Teredo, client 10.0.0.1
  "[2001:db8::1]",
  "[2001:2::1]",
  "[2001:10::1]",
  "[3fff::1]",
  "[100::1]",
  "[fd00:ec2::254]",
  "[fd00:ec2::253]",
  "[fd20:ce::254]",
  "[4000::1]",
  "[::1:2:3:4]",
  "[1::]",
];

/** Evenly spaced addresses through each non-public range, so no part of a range is untested. */
function sweep(): number[] {
  const out: number[] = [];
  for (const [base, bits] of NON_PUBLIC_V4) {
    const size = 2 ** (32 - bits);
    for (let i = 0; i < 8; i++) out.push(toNumber(base) + Math.floor(((size - 1) * i) / 7));
  }
  return out;
}

export function blockedCorpus(): string[] {
  const all = new Set<string>(TRICKY);
  for (const ip of V4_BASES) for (const encode of Object.values(V4_ENCODERS)) all.add(encode(toNumber(ip)));
  for (const n of sweep()) {
    all.add(V4_ENCODERS.dotted!(n));
    all.add(V4_ENCODERS.decimal!(n));
    all.add(V4_ENCODERS.mapped!(n));
  }
  return [...all];
}
