/**
 * Every way to write an IPv4 address in a URL host that WHATWG URL or inet_aton reads as that
 * address, written independently of the classifier under test.
 */
export function dotted(n: number): [number, number, number, number] {
  return [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
}

export function toNumber(ip: string): number {
  return ip.split(".").reduce((acc, p) => acc * 256 + Number(p), 0);
}

const hex = (n: number) => n.toString(16);
const FULL_WIDTH = (s: string) => s.replace(/[0-9]/g, (d) => String.fromCharCode(0xff10 + Number(d)));

export type Encoder = (n: number) => string;

/** Host forms (as they would appear between `http://` and the port). */
export const V4_ENCODERS: Record<string, Encoder> = {
  dotted: (n) => dotted(n).join("."),
  trailingDot: (n) => `${dotted(n).join(".")}.`,
  decimal: (n) => String(n),
  hex: (n) => `0x${hex(n)}`,
  hexUpper: (n) => `0X${hex(n).toUpperCase()}`,
  hexPadded: (n) => `0x${hex(n).padStart(12, "0")}`,
  octal: (n) => `0${n.toString(8)}`,
  dottedOctal: (n) =>
    dotted(n)
      .map((b) => `0${b.toString(8)}`)
      .join("."),
  dottedHex: (n) =>
    dotted(n)
      .map((b) => `0x${hex(b)}`)
      .join("."),
  mixed: (n) => {
    const [a, b, c, d] = dotted(n);
    return `0x${hex(a)}.0${b.toString(8)}.${c}.0x${hex(d)}`;
  },
  threePart: (n) => {
    const [a, b] = dotted(n);
    return `${a}.${b}.${n & 0xffff}`;
  },
  twoPart: (n) => `${dotted(n)[0]}.${n & 0xffffff}`,
  twoPartHex: (n) => `0x${hex(dotted(n)[0])}.0x${hex(n & 0xffffff)}`,
  percentEncoded: (n) =>
    dotted(n)
      .join(".")
      .replace(/[0-9]/g, (d) => `%3${d}`),
  fullWidth: (n) => FULL_WIDTH(dotted(n).join(".")),
  ideographicDots: (n) => dotted(n).join("\u3002"),
  mapped: (n) => `[::ffff:${dotted(n).join(".")}]`,
  mappedHex: (n) => `[::ffff:${hex(n >>> 16)}:${hex(n & 0xffff)}]`,
  mappedExpanded: (n) => `[0:0:0:0:0:ffff:${dotted(n).join(".")}]`,
  nat64: (n) => `[64:ff9b::${dotted(n).join(".")}]`,
  sixToFour: (n) => `[2002:${hex(n >>> 16)}:${hex(n & 0xffff)}::1]`,
};

/** Forms that only make sense as resolver answers or bare addresses (no brackets). */
export const V4_BARE_ENCODERS: Record<string, Encoder> = {
  dotted: V4_ENCODERS.dotted!,
  mapped: (n) => `::ffff:${dotted(n).join(".")}`,
  mappedHex: (n) => `::ffff:${hex(n >>> 16)}:${hex(n & 0xffff)}`,
  nat64: (n) => `64:ff9b::${hex(n >>> 16)}:${hex(n & 0xffff)}`,
};

/** Non-public IPv4 ranges, from the IANA special-purpose registry (the oracle for the property tests). */
export const NON_PUBLIC_V4: [string, number][] = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
];

export function inRange(n: number, [base, bits]: [string, number]): boolean {
  const size = 2 ** (32 - bits);
  const start = toNumber(base);
  return n >= start && n < start + size;
}
