import { catalogV1, escrowV1, fulfillmentV1, healthV1, paymentsV1, TOPICS } from "@c402/contracts";
import { migrate } from "@c402/db";
import { defaultOf } from "@c402/config";
import type { ServiceClient } from "@c402/rpc";
import { FEE_RULE_ID } from "@c402/evm-contracts";
import { EvmChain, ZERO_ADDRESS } from "@c402/evm-chain";
import type { Subscription } from "@c402/bus";
import { EVM_NETWORKS } from "@c402/x402";
import { healthService, serviceOutboxRelay, startPeriodic, type PeriodicTask, type ServiceDeps, type ServiceModule } from "@c402/runtime";
import { getAddress, isAddress } from "viem";
import { SvmChain } from "@c402/svm-chain";
import { paymentsConfigSpec, type LiveChainSettings, type SolanaSettings, type StellarSettings } from "./config";
import { Facilitator } from "./domain/facilitator";
import { Payments } from "./domain/payments";
import { PayoutAccounts } from "./domain/payout-accounts";
import { DAY_SECONDS } from "./domain/series";
import { SeriesCharges } from "./domain/series-charges";
import { priceOf, REHEARSAL_DOMAIN, REHEARSAL_NETWORK, splitPartiesOf, type SplitParties } from "./domain/requirements";
import { PaidOnDelivery } from "./domain/settlement/paid-on-delivery";
import { EscrowSettlement } from "./domain/settlement/escrow";
import { subscribeEscrowOutcomes } from "./events/escrow-outcomes";
import { escrowDeposits } from "./rpc/escrow-deposits";
import { catalogCheckouts } from "./rpc/catalog-checkouts";
import { originDelivery } from "./rpc/origin-delivery";
import { packageIssuer } from "./rpc/package-issuer";
import { LiveEvmSettlement, type LiveChain } from "./domain/settlement/live-evm";
import { LiveSvmSettlement } from "./domain/settlement/live-svm";
import { RehearsalSettlement } from "./domain/settlement/rehearsal";
import type { Settlement } from "./domain/settlement/settlement";
import { paymentsRpc } from "./rpc/payments-rpc";
import { paymentsMigrations } from "./store/migrations";
import { paymentsStore, type PaymentsDb } from "./store/payments-store";
import { oncePerScrape, sagaOldestAge, sagaSettlements } from "@c402/metrics";

export { paymentsConfigSpec, type LiveChainSettings, type SolanaSettings, type StellarSettings } from "./config";
export { paymentsMigrations } from "./store/migrations";
export const PAYMENTS_SCHEMA = "payments";

/** SETTLE_TIMEOUT_MS's default, as the configuration states it. */
const DEFAULT_SETTLE_TIMEOUT_MS = defaultOf(paymentsConfigSpec.settleTimeoutMs);

export interface PaymentsClients {
  catalog: ServiceClient<typeof catalogV1.CatalogService>;
  /** Calls relay checkouts' origins (paid only on delivery). */
  fulfillment: ServiceClient<typeof fulfillmentV1.FulfillmentService>;
  /** Deposits escrow sales (ADR 19); absent: escrow checkouts cannot be sold here. */
  escrow?: ServiceClient<typeof escrowV1.EscrowService>;
}

export interface PaymentsSettings {
  subjectSecret: string;
  liveChains: LiveChainSettings[];
  /** The Solana network, when Solana is exposed (SOLANA_ENABLED). */
  solana?: SolanaSettings;
  /** The Stellar network, when STELLAR_NETWORK is set. */
  stellar?: StellarSettings;
  settleTimeoutMs?: number;
  sweepIntervalMs?: number;
  /** How long a series day lasts on the test face (SCHEDULE_REHEARSAL_DAY_SECONDS; default 60). */
  scheduleRehearsalDaySeconds?: number;
  /** The C402Escrow contract's address (ESCROW_CONTRACT): with the escrow client, escrow checkouts sell. */
  escrowContract?: string;
  /** The protocol's fee wallet (FEE_WALLET_ADDRESS), where no live chain names it: an escrow rehearsal's terms name it. */
  feeWallet?: string;
}

/** The chain adapter and rail of one configured live network. */
export function createLiveChain(settings: LiveChainSettings): LiveChain {
  if (!isAddress(settings.feeWallet) || !isAddress(settings.splitFactory) || !isAddress(settings.usdc)) {
    throw new Error(`live chain ${settings.network}: usdc, split factory and fee wallet must be addresses`);
  }
  const chain = new EvmChain({
    network: settings.network,
    rpcUrl: settings.rpcUrl,
    usdc: getAddress(settings.usdc),
    splitFactory: getAddress(settings.splitFactory),
    facilitatorKey: settings.facilitatorKey as `0x${string}`,
    confirmations: settings.confirmations,
    ...(settings.rpcTimeoutMs !== undefined ? { rpcTimeoutMs: settings.rpcTimeoutMs } : {}),
  });
  const recipients = (parties: SplitParties) => ({
    seller: getAddress(parties.payTo),
    platform: parties.platformFeeTo === null ? ZERO_ADDRESS : getAddress(parties.platformFeeTo),
    platformBps: parties.platformFeeTo === null ? 0 : parties.platformFeeBps,
    feeWallet: getAddress(settings.feeWallet),
    feeRule: FEE_RULE_ID.standard,
  });
  return {
    chain,
    recipients,
    rail: {
      network: settings.network,
      asset: getAddress(settings.usdc),
      // The token's EIP-712 domain: the official clients sign only with it (x402-interop §9.5).
      extra: { name: settings.usdcName, version: settings.usdcVersion },
      // The checkout's split contract, which divides the total between seller, platform and fee wallet on-chain.
      payTo: (checkout) => chain.splitAddress(recipients(splitPartiesOf(checkout))),
      amounts: priceOf,
      // A series' held periods are settled on this rail (ADR 20: Base only), on real days.
      seriesDaySeconds: DAY_SECONDS,
    },
  };
}

/** The saga's unfinished states in the metrics, read at each scrape (every state and kind shown, at 0 when empty). */
function sagaGauges(db: PaymentsDb): () => void {
  const read = oncePerScrape(async () => {
    const counts = await paymentsStore.unfinishedCounts(db);
    return (["claimed", "delivered", "settling"] as const).flatMap((state) =>
      [false, true].map((testMode) => ({
        state,
        mode: testMode ? "rehearsal" : "live",
        row: counts.find((c) => c.state === state && c.testMode === testMode),
      })),
    );
  });
  const removals = [
    sagaSettlements.source(async () => (await read()).map(({ state, mode, row }) => ({ labels: { state, mode }, value: row?.count ?? 0 }))),
    sagaOldestAge.source(async () => (await read()).map(({ state, mode, row }) => ({ labels: { state, mode }, value: row?.oldestSeconds ?? 0 }))),
  ];
  return () => removals.forEach((remove) => remove());
}

/** The Stellar rail's modules, loaded on demand. */
async function loadStellarModules() {
  const [{ StellarChain }, { LiveStellarSettlement }, { StellarRehearsal }] = await Promise.all([
    import("@c402/stellar-chain"),
    import("./domain/settlement/live-stellar"),
    import("./domain/settlement/rehearsal-stellar"),
  ]);
  return { StellarChain, LiveStellarSettlement, StellarRehearsal };
}

export async function createPaymentsService(deps: ServiceDeps, clients: PaymentsClients, settings: PaymentsSettings): Promise<ServiceModule> {
  await migrate(deps.database, paymentsMigrations);
  const relay = serviceOutboxRelay(deps, "payments");
  const checkouts = catalogCheckouts(clients.catalog);
  const chains = new Map(settings.liveChains.map((c) => [c.network, createLiveChain(c)] as const));
  const db = deps.database.db;
  const onCommitted = () => relay.poke();
  const now = () => new Date();
  const settleTimeoutMs = settings.settleTimeoutMs ?? DEFAULT_SETTLE_TIMEOUT_MS;
  const originCalls = originDelivery(clients.fulfillment);
  const packages = packageIssuer(clients.fulfillment);
  const paidOnDelivery = new PaidOnDelivery({ db, delivery: originCalls, settleTimeoutMs, now });
  const live =
    chains.size > 0
      ? new LiveEvmSettlement({
          db,
          chains,
          subjectSecret: settings.subjectSecret,
          settleTimeoutMs,
          paidOnDelivery,
          onCommitted,
          now,
          onSweepError: (err, paymentId) => deps.logger.warn({ err, payment_id: paymentId }, "sweep could not resume a payment"),
        })
      : undefined;
  // Stellar's modules (stellar-sdk) load only where the rail is configured: a payments process without it starts
  // without them (a second or more, paid by every process a crash test starts).
  const stellarModules = settings.stellar ? await loadStellarModules() : undefined;
  const stellarChain =
    settings.stellar && stellarModules
      ? new stellarModules.StellarChain({
          network: settings.stellar.network,
          rpcUrl: settings.stellar.rpcUrl,
          usdcContract: settings.stellar.usdcContract,
          accountSecret: settings.stellar.facilitatorSecret,
          channelSecrets: settings.stellar.channelSecrets,
          ...(settings.stellar.rpcCaPem !== undefined ? { caCertificatePem: settings.stellar.rpcCaPem } : {}),
          ...(settings.stellar.rpcTimeoutMs !== undefined ? { rpcTimeoutMs: settings.stellar.rpcTimeoutMs } : {}),
          ...(settings.stellar.ledgerSeconds !== undefined ? { ledgerSeconds: settings.stellar.ledgerSeconds } : {}),
        })
      : undefined;
  const rehearsal = new RehearsalSettlement({
    db,
    subjectSecret: settings.subjectSecret,
    onCommitted,
    now,
    contractSignatures: (network) => live?.contractSignatures(network),
    paidOnDelivery,
    ...(settings.scheduleRehearsalDaySeconds !== undefined ? { seriesDaySeconds: settings.scheduleRehearsalDaySeconds } : {}),
    ...(settings.solana ? { solana: { network: settings.solana.network, usdcMint: settings.solana.usdcMint } } : {}),
    ...(stellarChain && stellarModules
      ? {
          stellar: new stellarModules.StellarRehearsal(
            { network: stellarChain.network, usdcContract: stellarChain.usdcContract, serviceAccounts: stellarChain.serviceAccounts },
            now,
          ),
        }
      : {}),
  });
  const solanaChain = settings.solana
    ? await SvmChain.create({
        network: settings.solana.network,
        rpcUrl: settings.solana.rpcUrl,
        usdcMint: settings.solana.usdcMint,
        feePayerSecret: settings.solana.feePayerKey,
        ...(settings.solana.rpcTimeoutMs !== undefined ? { rpcTimeoutMs: settings.solana.rpcTimeoutMs } : {}),
      })
    : undefined;
  /** What the saga of a rail settling one network is given: its chain adapter, and what every rail shares. */
  const oneNetworkSaga = <Chain extends { network: string }>(chain: Chain) => ({
    db,
    chains: new Map([[chain.network, chain]]),
    subjectSecret: settings.subjectSecret,
    settleTimeoutMs,
    onCommitted,
    now,
    onSweepError: (err: unknown, paymentId: string) => deps.logger.warn({ err, payment_id: paymentId }, "sweep could not resume a payment"),
    paidOnDelivery,
  });
  const solana = solanaChain ? new LiveSvmSettlement(oneNetworkSaga(solanaChain)) : undefined;
  const stellar = stellarChain && stellarModules ? new stellarModules.LiveStellarSettlement(oneNetworkSaga(stellarChain)) : undefined;
  /** Escrow sales (ADR 19): the rehearsal's always, the live one where a live EVM network is configured (the first: escrow is Base only). */
  const escrowSettlements = (client: ServiceClient<typeof escrowV1.EscrowService>, contract: string): EscrowSettlement[] => {
    if (!isAddress(contract)) throw new Error("ESCROW_CONTRACT must be an EVM address");
    // The protocol's fee is part of every deposit's terms, rehearsed ones too.
    const feeWallet = settings.feeWallet ?? settings.liveChains[0]?.feeWallet;
    if (feeWallet === undefined || !isAddress(feeWallet)) throw new Error("ESCROW_CONTRACT is set; also set FEE_WALLET_ADDRESS (the escrow fee's wallet)");
    const common = {
      db,
      subjectSecret: settings.subjectSecret,
      now,
      deposits: escrowDeposits(client),
      paidOnDelivery,
      checkouts,
      onSweepError: (err: unknown, paymentId: string) => deps.logger.warn({ err, payment_id: paymentId }, "sweep could not resume an escrow deposit"),
    };
    const rehearsalNetwork = EVM_NETWORKS[REHEARSAL_NETWORK];
    const rehearsed = new EscrowSettlement({
      ...common,
      testMode: true,
      // Signed under the rehearsal domain no token has (ADR 5): valid on no chain, whatever it is replayed to.
      network: {
        network: REHEARSAL_NETWORK,
        chainId: rehearsalNetwork.chainId,
        contract: getAddress(contract),
        token: { address: getAddress(rehearsalNetwork.usdc), ...REHEARSAL_DOMAIN },
        feeTo: getAddress(feeWallet),
      },
    });
    const liveChain = settings.liveChains[0];
    if (!liveChain) return [rehearsed];
    const live = new EscrowSettlement({
      ...common,
      testMode: false,
      network: {
        network: liveChain.network,
        chainId: Number(liveChain.network.split(":")[1]),
        contract: getAddress(contract),
        token: { address: getAddress(liveChain.usdc), name: liveChain.usdcName, version: liveChain.usdcVersion },
        feeTo: getAddress(liveChain.feeWallet),
      },
    });
    return [rehearsed, live];
  };
  const escrow = clients.escrow && settings.escrowContract ? escrowSettlements(clients.escrow, settings.escrowContract) : [];
  const settlements: Settlement[] = [rehearsal, ...(live ? [live] : []), ...(solana ? [solana] : []), ...(stellar ? [stellar] : []), ...escrow];
  const payments = new Payments({ db, checkouts, settlements, originCalls, packages, now, onCommitted });
  const facilitator = new Facilitator({ checkouts, settlements });
  const series = new SeriesCharges({ db, settlements });
  let sweeper: PeriodicTask | undefined;
  let escrowOutcomes: Subscription | undefined;
  let unregisterGauges = () => {};
  const chainChecks = Object.fromEntries([
    ...[...chains.entries()].map(([network, c]) => [`chain ${network}`, () => c.chain.ping()] as const),
    ...(solanaChain ? [[`chain ${solanaChain.network}`, () => solanaChain.ping()] as const] : []),
    ...(stellarChain ? [[`chain ${stellarChain.network}`, () => stellarChain.ping()] as const] : []),
  ]);
  return {
    name: "payments",
    register(server) {
      server.add(paymentsV1.PaymentsService, paymentsRpc(payments, facilitator, new PayoutAccounts({ solana: solanaChain, stellar: stellarChain }), series));
      server.add(healthV1.HealthService, healthService("payments", { database: () => deps.database.ping(), bus: () => deps.bus.ping(), ...chainChecks }));
    },
    async start() {
      await deps.bus.ensureTopics([TOPICS.paymentSettled, TOPICS.accountActivity, ...(escrow.length > 0 ? [TOPICS.escrowEvents] : [])]);
      relay.start();
      if (escrow.length > 0) escrowOutcomes = await subscribeEscrowOutcomes(deps.bus, db, onCommitted);
      unregisterGauges = sagaGauges(db);
      // Live payments, and relay rehearsals, can be left unfinished by a crash: the sweep resumes them.
      sweeper = startPeriodic({ name: "sweep", intervalMs: settings.sweepIntervalMs ?? 5_000, round: () => payments.sweep(), logger: deps.logger });
    },
    async stop() {
      await escrowOutcomes?.stop();
      unregisterGauges();
      await sweeper?.stop();
      await relay.stop();
    },
  };
}
