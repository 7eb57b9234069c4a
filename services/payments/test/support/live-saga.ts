import { LiveEvmSettlement, type LiveChain, type LiveEvmSettlementOptions } from "../../src/domain/settlement/live-evm";
import type { PaymentsDb } from "../../src/store/payments-store";

/** The live settlement (the saga) on one chain, as the service builds it; `overrides` replace the test defaults. */
export function liveSaga(db: PaymentsDb, live: LiveChain, overrides: Partial<Omit<LiveEvmSettlementOptions, "db" | "chains">> = {}): LiveEvmSettlement {
  return new LiveEvmSettlement({
    db,
    chains: new Map([[live.rail.network, live]]),
    subjectSecret: "s",
    settleTimeoutMs: 5_000,
    onCommitted: () => {},
    now: () => new Date(),
    ...overrides,
  });
}
