import { EmbeddedPostgres, migrate, openPostgres } from "@c402/db";
import { devchainKey, devchainSettlement, startDevchain, type DevchainInfo } from "@c402/devchain";
import { freshPostgresDatabase, startRpcFaultProxy } from "@c402/testkit";
import { TestUSDC } from "@c402/evm-contracts";
import { decodeHeader, encodeHeader, parsePaymentPayload, signExactEvmPayment, type PaymentPayload, type PaymentRequirements } from "@c402/x402";
import { createPublicClient, createWalletClient, getAddress, http, type LocalAccount } from "viem";
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount } from "viem/accounts";
import { createLiveChain, paymentsMigrations, PAYMENTS_SCHEMA, type LiveChainSettings } from "../../src";
import type { LiveChain } from "../../src/domain/settlement/live-evm";
import { requirementsFor, type CheckoutForPayment } from "../../src/domain/requirements";
import { evmPayloadOf } from "../../src/domain/verify-payment";

/** The devchain's test USDC as the live-settlement suites use it; demo account 4 mints. */
export function devchainUsdc(devchain: DevchainInfo) {
  const minter = mnemonicToAccount(devchain.mnemonic, { addressIndex: 4 });
  const client = createPublicClient({ transport: http(devchain.url) });
  const wallet = createWalletClient({ account: minter, transport: http(devchain.url) });
  return {
    client,
    minter,
    balance: (owner: string) => client.readContract({ address: devchain.usdc, abi: TestUSDC.abi, functionName: "balanceOf", args: [getAddress(owner)] }),
    async mint(to: string, amount: bigint): Promise<void> {
      const hash = await wallet.writeContract({ address: devchain.usdc, abi: TestUSDC.abi, functionName: "mint", args: [getAddress(to), amount], chain: null });
      await client.waitForTransactionReceipt({ hash });
    },
  };
}

/** The buyer's payment for the checkout's live requirement, as the service parses it from the header. */
export async function signedLivePayment(
  live: LiveChain,
  checkout: CheckoutForPayment,
  buyer: LocalAccount,
  opts?: Parameters<typeof signExactEvmPayment>[2],
): Promise<{ payload: PaymentPayload; requirement: PaymentRequirements }> {
  const requirement = requirementsFor("live", checkout, [live.rail])[0] as PaymentRequirements;
  const payload = evmPayloadOf(parsePaymentPayload(decodeHeader(encodeHeader(await signExactEvmPayment(buyer, requirement, opts)))));
  return { payload, requirement };
}

let checkoutSeq = 0;

/** An armed, reusable checkout selling at 0.10 USDC to a fresh seller wallet (override any field). */
export function liveCheckout(overrides: Partial<CheckoutForPayment> = {}): CheckoutForPayment {
  return {
    id: `chk_live_${++checkoutSeq}`,
    accountId: "acct_s",
    title: "t",
    priceAtomic: 100_000n,
    payTo: privateKeyToAccount(generatePrivateKey()).address,
    armed: true,
    reusable: true,
    status: "open",
    ...overrides,
  };
}

/** What the saga suites run on: a devchain, the payments schema in an embedded database, the live chain adapter. */
export async function openSagaFixture() {
  const devchain = await startDevchain({ port: 0 });
  const pg = await EmbeddedPostgres.open();
  const database = pg.forSchema("payments");
  await migrate(database, paymentsMigrations);
  return {
    devchain,
    database,
    live: createLiveChain(devchainSettlement(devchain)),
    usdc: devchainUsdc(devchain),
    async close(): Promise<void> {
      await pg.close();
      await devchain.stop();
    },
  };
}

export type SagaFixture = Awaited<ReturnType<typeof openSagaFixture>>;

/**
 * A saga fixture whose settlement reaches the node through a fault proxy on
 * loopback (G7 and the nonce suites break the path to the chain on purpose).
 */
export async function openProxiedSagaFixture(rpcTimeoutMs: number) {
  const fixture = await openSagaFixture();
  const proxy = await startRpcFaultProxy(fixture.devchain.url);
  const live = createLiveChain({ ...devchainSettlement(fixture.devchain), rpcUrl: proxy.url, rpcTimeoutMs });
  return {
    ...fixture,
    proxy,
    /** The chain as the saga sees it: through the proxy. */
    live,
    async close(): Promise<void> {
      await proxy.close();
      await fixture.close();
    },
  };
}

/**
 * What the kill -9 suites stand on: a devchain of their own, a fresh
 * PostgreSQL database with the payments schema migrated, the chain settings a
 * payments process is given (signing with demo account `facilitatorIndex`, so
 * no other suite shares its nonces) and its test USDC.
 */
export async function openCrashRig(facilitatorIndex: number) {
  const devchain = await startDevchain({ port: 0 });
  const postgres = await freshPostgresDatabase();
  const database = openPostgres({ url: postgres.url, schema: PAYMENTS_SCHEMA });
  await migrate(database, paymentsMigrations);
  const chain: LiveChainSettings = { ...devchainSettlement(devchain), facilitatorKey: devchainKey(devchain.mnemonic, facilitatorIndex) };
  return {
    devchain,
    postgres,
    database,
    chain,
    live: createLiveChain(chain),
    usdc: devchainUsdc(devchain),
    async close(): Promise<void> {
      await database.close();
      await postgres.drop();
      await devchain.stop();
    },
  };
}

export type CrashRig = Awaited<ReturnType<typeof openCrashRig>>;
