import { lookup as dnsLookup } from "node:dns/promises";
import { isIP, type LookupFunction } from "node:net";
import { Agent, buildConnector } from "undici";
import { OutboundRefused } from "./errors";
import { classifyHost, type HostClass } from "./host-class";
import { addressVerdict, isClassAllowed, type ResolvedAddress, type ResolvedPolicy } from "./policy";

async function systemResolve(hostname: string): Promise<ResolvedAddress[]> {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
}

function blocked(address: string, addressClass: HostClass): OutboundRefused {
  return new OutboundRefused("blocked-address", `${address} is ${addressClass}`, addressClass);
}

/** Resolves a name and checks every answer: one forbidden address refuses the whole set. */
export async function resolveChecked(hostname: string, policy: ResolvedPolicy): Promise<ResolvedAddress[]> {
  const hostClass = classifyHost(hostname);
  if (hostClass !== "name" && !isClassAllowed(hostClass, policy)) throw blocked(hostname, hostClass);
  const answers = await (policy.resolve ?? systemResolve)(hostname);
  if (answers.length === 0) throw Object.assign(new Error(`no address for ${hostname}`), { code: "ENOTFOUND" });
  // Not "pick the good ones": a name that also points inside is hostile (or misconfigured), and
  // happy-eyeballs or a retry could otherwise land on the bad address.
  for (const { address } of answers) {
    const verdict = addressVerdict(address, policy);
    if (!verdict.allowed) throw blocked(address, verdict.addressClass);
  }
  return answers.map(({ address }) => ({ address, family: isIP(address) === 6 ? 6 : 4 }));
}

/**
 * The `lookup` net.connect/tls.connect call for a host name. The socket connects to an address
 * this function returned, so the check and the connection use the same answer: a resolver that
 * changes its mind (DNS rebinding) between an earlier check and now gains nothing.
 */
function guardedLookup(policy: ResolvedPolicy): LookupFunction {
  return (hostname, options, callback) => {
    resolveChecked(hostname, policy).then(
      (answers) => {
        const family = typeof options === "object" ? options.family : options;
        const usable = family === 4 || family === 6 ? answers.filter((a) => a.family === family) : answers;
        const first = usable[0];
        if (!first) return callback(Object.assign(new Error(`no IPv${family} address for ${hostname}`), { code: "ENOTFOUND" }), "", 4);
        if (typeof options === "object" && options.all) return (callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, usable);
        callback(null, first.address, first.family);
      },
      (err: Error) => callback(err as NodeJS.ErrnoException, "", 4),
    );
  };
}

/** The one undici Agent a guarded fetch uses: every socket it opens goes through the policy. */
export function createGuardedAgent(policy: ResolvedPolicy): Agent {
  const base = buildConnector({ timeout: policy.timeoutMs, lookup: guardedLookup(policy), ...(policy.ca ? { ca: policy.ca } : {}) });
  const connect: buildConnector.connector = (opts, callback) => {
    // net.connect skips `lookup` for an IP literal, so literals are checked here, before any socket.
    if (isIP(opts.hostname)) {
      const verdict = addressVerdict(opts.hostname, policy);
      if (!verdict.allowed) return callback(blocked(opts.hostname, verdict.addressClass), null);
    }
    base(opts, (err, socket) => {
      if (err || !socket) return callback(err ?? new Error("no socket"), null);
      // Tripwire: whatever path led here, the peer must be an allowed address.
      const peer = socket.remoteAddress;
      const verdict = peer ? addressVerdict(peer, policy) : { allowed: false, addressClass: "invalid" as const };
      if (!verdict.allowed) {
        socket.destroy();
        return callback(blocked(peer ?? "unknown peer", verdict.addressClass), null);
      }
      callback(null, socket);
    });
  };
  // maxResponseSize is a second bound on the raw (still compressed) body; the stream wrapper bounds the decoded one.
  return new Agent({ connect, maxResponseSize: policy.maxResponseBytes });
}
