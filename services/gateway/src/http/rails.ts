import { supportedFromMessage } from "@c402/contracts";
import type { Logger } from "@c402/logging";
import type { ServiceClients } from "./deps";

/** The chain families of the facilitator API (`/x402/{family}/…`). */
export const CHAIN_FAMILIES = ["base", "solana", "stellar"] as const;
export type ChainFamily = (typeof CHAIN_FAMILIES)[number];

/**
 * Where every rehearsal settles, simulated (ADR 5): an EVM id, so rehearsals
 * are the base family's. The e2e discovery test checks it against what a
 * rehearsal face really quotes.
 */
export { REHEARSAL_NETWORK } from "@c402/x402";

/** The live networks of each family: the kinds payments' facilitator lists (`GET /x402/{family}/supported`). */
export type LiveNetworks = Record<ChainFamily, string[]>;

/** How long discovery documents reuse payments' answer: the networks are configuration, fixed for a run. */
const KNOWN_TTL_MS = 60_000;
/** After payments failed to answer, how long discovery documents do without asking again (so an outage does not slow every GET /). */
const FAILED_TTL_MS = 5_000;
/** How long one question to payments may take. */
const ASK_TIMEOUT_MS = 3_000;

/**
 * What this run settles on, per chain family, read from the payments
 * service's facilitator (the same kinds `/x402/{family}/supported` answers,
 * the same settlements the live faces quote), so the discovery documents and
 * /health/facilitator never advertise a network the run does not serve.
 */
export class SettlementRails {
  private last: { networks: LiveNetworks; at: number } | undefined;
  private failedAt: number | undefined;
  private asking: Promise<LiveNetworks> | undefined;

  constructor(
    private readonly payments: ServiceClients["payments"],
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Asks payments now (every family at once; concurrent callers share one question); rejects when payments does not answer. */
  ask(): Promise<LiveNetworks> {
    this.asking ??= this.askPayments().finally(() => (this.asking = undefined));
    return this.asking;
  }

  private async askPayments(): Promise<LiveNetworks> {
    try {
      const answers = await Promise.all(
        CHAIN_FAMILIES.map(async (family) => {
          const supported = supportedFromMessage(await this.payments.facilitatorSupported({ family }, { timeoutMs: ASK_TIMEOUT_MS }));
          return [family, [...new Set(supported.kinds.map((k) => k.network))]] as const;
        }),
      );
      const networks = Object.fromEntries(answers) as LiveNetworks;
      this.last = { networks, at: this.now() };
      this.failedAt = undefined;
      return networks;
    } catch (err) {
      this.failedAt = this.now();
      throw err;
    }
  }

  /**
   * For the discovery documents: a recent answer, or a fresh one; when
   * payments does not answer, the last answer this gateway had, or
   * undefined when it never had one (a document then lists no live network).
   */
  async known(): Promise<LiveNetworks | undefined> {
    const now = this.now();
    if (this.last && now - this.last.at < KNOWN_TTL_MS) return this.last.networks;
    if (this.failedAt !== undefined && now - this.failedAt < FAILED_TTL_MS) return this.last?.networks;
    try {
      return await this.ask();
    } catch (err) {
      this.logger.warn({ err }, "payments did not say which networks it settles; the discovery documents use the last answer");
      return this.last?.networks;
    }
  }

  /** The last answer payments gave, however old (undefined before the first). */
  lastKnown(): LiveNetworks | undefined {
    return this.last?.networks;
  }
}
