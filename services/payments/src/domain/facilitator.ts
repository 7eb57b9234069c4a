import { ProblemError } from "@c402/problems";
import {
  acceptedMatches,
  parsePaymentPayload,
  parseRequirements,
  PaymentHeaderError,
  type PaymentRequirements,
  type SettleResponse,
  type VerifyResponse,
} from "@c402/x402";
import { getAddress, type Hex } from "viem";
import { authorizationOf, type LiveChain } from "./live-settlement";
import { simulationRejectReason, verifyPayment } from "./verify-payment";

/**
 * The public x402 facilitator per chain family, as the official facilitators
 * behave: verify and settle a plain `exact` EIP-3009 payment to the
 * requirement's `payTo` (no checkout involved). Failures are answers
 * (`isValid: false`, `success: false` with a reason), not HTTP errors.
 */
export const FAMILIES = ["base", "stellar", "solana"] as const;
export type Family = (typeof FAMILIES)[number];

export class Facilitator {
  constructor(
    private readonly chains: Map<string, LiveChain>,
    private readonly opts: { settleTimeoutMs: number; now: () => Date },
  ) {}

  supported(family: Family) {
    const chains = family === "base" ? [...this.chains.values()] : [];
    return {
      kinds: chains.map((c) => ({ x402Version: 2, scheme: "exact", network: c.rail.network })),
      extensions: [],
      signers: chains.length > 0 ? { "eip155:*": [...new Set(chains.map((c) => c.chain.facilitator.address))] } : {},
    };
  }

  private async check(family: Family, network: string, rawRequirement: unknown, rawPayload: unknown) {
    const live = family === "base" ? this.chains.get(network) : undefined;
    if (!live)
      return {
        invalid: { isValid: false, invalidReason: "invalid_network", invalidMessage: `This facilitator does not settle ${network} for family ${family}.` },
      };
    let requirement: PaymentRequirements;
    let payload;
    try {
      requirement = parseRequirements(rawRequirement as Record<string, unknown>);
      payload = parsePaymentPayload(rawPayload as Record<string, unknown>);
    } catch (err) {
      const reason = err instanceof PaymentHeaderError ? err.reason : "invalid_payload";
      return { invalid: { isValid: false, invalidReason: reason, invalidMessage: err instanceof Error ? err.message : "invalid" } };
    }
    const payer = getAddress(payload.payload.authorization.from);
    const fail = (invalidReason: string, invalidMessage: string) => ({ invalid: { isValid: false, invalidReason, invalidMessage, payer } });
    if (requirement.scheme !== "exact") return fail("invalid_scheme", "Only the exact scheme is supported.");
    if (requirement.network !== network) return fail("invalid_network", "The requirement names another network.");
    if (getAddress(requirement.asset) !== getAddress(live.rail.asset)) return fail("invalid_payment_requirements", "Only USDC is settled on this network.");
    if (requirement.extra.name !== live.rail.domain.name || requirement.extra.version !== live.rail.domain.version) {
      return fail("invalid_exact_evm_missing_eip712_domain", "extra.name and extra.version must be the token's EIP-712 domain.");
    }
    if (payload.x402Version === 2 && payload.accepted && !acceptedMatches(payload.accepted, requirement))
      return fail("invalid_payment_requirements", "accepted does not match the requirement.");
    try {
      await verifyPayment(payload, requirement, Math.floor(this.opts.now().getTime() / 1000), (signer, digest, signature) =>
        live.chain.isValidContractSignature(signer, digest, signature),
      );
    } catch (err) {
      if (err instanceof ProblemError) return fail(String(err.extensions.reason ?? "invalid_payload"), err.message);
      throw err;
    }
    const auth = authorizationOf(payload);
    const signature = payload.payload.signature as Hex;
    const simulation = await live.chain.simulateTransfer(auth, signature);
    if (!simulation.ok) return fail(simulationRejectReason(simulation.reason), `The transfer would fail: ${simulation.reason.replace(/_/g, " ")}.`);
    return { live, auth, signature, payer };
  }

  async verify(family: Family, network: string, requirement: unknown, payload: unknown): Promise<VerifyResponse> {
    const r = await this.check(family, network, requirement, payload);
    if ("invalid" in r) return r.invalid as VerifyResponse;
    return { isValid: true, payer: r.payer };
  }

  async settle(family: Family, network: string, requirement: unknown, payload: unknown): Promise<SettleResponse> {
    const r = await this.check(family, network, requirement, payload);
    if ("invalid" in r) {
      const v = r.invalid as VerifyResponse;
      return {
        success: false,
        errorReason: v.invalidReason,
        ...(v.invalidMessage ? { errorMessage: v.invalidMessage } : {}),
        ...(v.payer ? { payer: v.payer } : {}),
        transaction: "",
        network,
      };
    }
    let signed;
    try {
      signed = await r.live.chain.signTransfer(r.auth, r.signature);
    } catch {
      // Preparing the transaction re-runs it against the chain: a concurrent settle of the same
      // authorization may have landed since our simulation.
      const again = await r.live.chain.simulateTransfer(r.auth, r.signature);
      const errorReason = !again.ok && again.reason === "nonce_used" ? "duplicate_settlement" : "unexpected_settle_error";
      return { success: false, errorReason, payer: r.payer, transaction: "", network };
    }
    await r.live.chain.broadcast(signed.raw).catch(() => undefined);
    const receipt = await r.live.chain.waitForReceipt(signed.txHash, this.opts.settleTimeoutMs);
    if (!receipt) return { success: false, errorReason: "settlement_pending", payer: r.payer, transaction: signed.txHash, network };
    if (receipt.status !== "success")
      return { success: false, errorReason: "invalid_exact_evm_transaction_failed", payer: r.payer, transaction: signed.txHash, network };
    return { success: true, payer: r.payer, transaction: signed.txHash, network };
  }
}
