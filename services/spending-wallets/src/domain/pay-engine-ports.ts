import type { GuardedFetch } from "@c402/outbound-http";
import type { Logger } from "@c402/logging";
import type { WalletNetwork } from "../config";
import type { BalanceReader, KeyVault, PayEngine, SpendBudget, WalletEvents } from "./ports";

/** What the book hands the pay engine: its ports, the guarded fetch and the chains offered. */
export interface PayEnginePorts {
  budget: SpendBudget;
  vault: KeyVault;
  balances: BalanceReader;
  events: WalletEvents;
  /** The outbound guard's fetch (OUTBOUND_* settings): the URLs agents pay are the internet's. */
  fetch: GuardedFetch;
  /** The chains offered, each with its CAIP-2 network, RPC URL and USDC. */
  networks: WalletNetwork[];
  logger: Logger;
}

/** Builds the engine (the integrator passes `(ports) => new X402PayEngine(ports)`). */
export type PayEngineFactory = (ports: PayEnginePorts) => PayEngine;
