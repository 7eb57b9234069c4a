import type { PaymentRequirements } from "@x402/core/types";
import { amountOf, caip2Of, payableRequirement } from "../../src/pay/requirements";

const BASE = "eip155:8453";
const BASE_USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const SOLANA = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
const SOLANA_USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

/** A requirement as a seller may send it (v1 ones name their network and carry maxAmountRequired). */
type AsSent = Omit<Partial<PaymentRequirements>, "network"> & { network?: string; maxAmountRequired?: string };

const requirement = (over: AsSent): PaymentRequirements =>
  ({
    scheme: "exact",
    network: BASE,
    asset: BASE_USDC,
    amount: "1000",
    payTo: "0x0000000000000000000000000000000000000001",
    maxTimeoutSeconds: 60,
    extra: {},
    ...over,
  }) as PaymentRequirements;

describe("choosing the requirement a wallet can pay", () => {
  it("maps v1 network names to CAIP-2 with the official tables", () => {
    expect(caip2Of("base")).toBe(BASE);
    expect(caip2Of("base-sepolia")).toBe("eip155:84532");
    expect(caip2Of("solana")).toBe(SOLANA);
    expect(caip2Of("solana-devnet")).toBe("solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1");
    expect(caip2Of(BASE)).toBe(BASE);
    expect(caip2Of("unknown-chain")).toBe("unknown-chain");
  });

  it("reads v2 amount and v1 maxAmountRequired, and nothing that is not an atomic integer", () => {
    expect(amountOf(requirement({ amount: "250000" }))).toBe(250_000n);
    expect(amountOf(requirement({ amount: undefined, maxAmountRequired: "7" }))).toBe(7n);
    for (const bad of ["-1", "1.5", "0x10", "", "1e6"]) expect(amountOf(requirement({ amount: bad }))).toBeUndefined();
  });

  it("keeps the first exact USDC requirement on the wallet's network, in the seller's order", () => {
    const accepts = [
      requirement({ network: SOLANA, asset: SOLANA_USDC }),
      requirement({ scheme: "upto" }),
      requirement({ asset: "0x1111111111111111111111111111111111111111" }),
      requirement({ network: "eip155:84532" }),
      requirement({ asset: BASE_USDC.toLowerCase(), amount: "42" }),
      requirement({ amount: "43" }),
    ];
    expect(payableRequirement(accepts, BASE, BASE_USDC)).toBe(accepts[4]);
    expect(payableRequirement(accepts, SOLANA, SOLANA_USDC)).toBe(accepts[0]);
    // Solana addresses are case-sensitive base58.
    expect(payableRequirement([requirement({ network: SOLANA, asset: SOLANA_USDC.toLowerCase() })], SOLANA, SOLANA_USDC)).toBeUndefined();
    expect(payableRequirement([requirement({ network: "base", maxAmountRequired: "5", amount: undefined })], BASE, BASE_USDC)).toBeDefined();
    expect(payableRequirement([requirement({ amount: "lots" })], BASE, BASE_USDC)).toBeUndefined();
  });
});
