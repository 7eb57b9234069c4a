import dns from "node:dns";

/**
 * The official x402 Stellar client and facilitator ask Horizon (horizon-testnet.stellar.org,
 * a URL they build themselves) how long ledgers take, and use 5 s when it cannot be
 * reached. Tests must not leave the machine: this makes stellar.org names fail to
 * resolve, so no connection is ever attempted and the fallback is what runs, here as
 * on a machine without the internet.
 */
export function refuseStellarOrgLookups(): { refused: string[]; restore(): void } {
  const original = dns.lookup;
  const refused: string[] = [];
  const refusing = ((hostname: string, ...rest: unknown[]) => {
    const callback = rest[rest.length - 1] as (err: NodeJS.ErrnoException) => void;
    if (/(^|\.)stellar\.org$/i.test(hostname)) {
      refused.push(hostname);
      const err: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname} (refused by the test: no internet)`);
      err.code = "ENOTFOUND";
      process.nextTick(callback, err);
      return;
    }
    return (original as (...args: unknown[]) => void)(hostname, ...rest);
  }) as typeof dns.lookup;
  dns.lookup = refusing;
  return {
    refused,
    restore: () => {
      dns.lookup = original;
    },
  };
}
