import { newSolanaKeyPair, startSolanaDevnet, type SolanaDevnet } from "@c402/solana-devnet";
import { createKeyPairSignerFromBytes } from "@solana/kit";
import { x402Facilitator } from "@x402/core/facilitator";
import type { Network } from "@x402/core/types";
import { toFacilitatorSvmSigner } from "@x402/svm";
import { registerExactSvmScheme } from "@x402/svm/exact/facilitator";
import { ExactSvmScheme } from "@x402/svm/exact/server";
import type { PayingWallet } from "../../src/domain/ports";
import { payHarness, problemOf } from "./support/harness";
import { inProcessFacilitator, startSeller, type Seller } from "./support/seller";

/**
 * The pay engine on Solana (the local devnet: litesvm behind JSON-RPC, devnet
 * USDC at its real mint) paying an `@x402/express` seller whose official SVM
 * facilitator co-signs as fee payer and settles on the devnet.
 */
describe("X402PayEngine on Solana (local devnet, @x402/express seller)", () => {
  const PRICE = 120_000n; // 0.12 USDC
  let devnet: SolanaDevnet;
  let seller: Seller;
  let payTo: string;
  let walletSeq = 0;

  const secretOf = (keygenJson: string) => Uint8Array.from(JSON.parse(keygenJson) as number[]);

  beforeAll(async () => {
    devnet = await startSolanaDevnet();
    const feePayer = await devnet.fundedKeyPair(1_000_000_000n);
    const facilitator = new x402Facilitator();
    registerExactSvmScheme(facilitator, {
      signer: toFacilitatorSvmSigner(await createKeyPairSignerFromBytes(secretOf(feePayer.secretKey)), { defaultRpcUrl: devnet.url }),
      networks: devnet.network as Network,
    });
    payTo = newSolanaKeyPair().address;
    // The official facilitator never pays to create the payee's token account.
    await devnet.setTokenBalance(payTo as never, 0n);
    const accepts = { scheme: "exact" as const, network: devnet.network as Network, payTo, price: { amount: String(PRICE), asset: devnet.usdcMint } };
    seller = await startSeller({
      facilitator: inProcessFacilitator(facilitator),
      schemes: [[devnet.network as Network, new ExactSvmScheme()]],
      paid: [{ path: "/report", accepts }],
    });
  }, 60_000);

  afterAll(async () => {
    await seller?.close();
    await devnet?.close();
  });

  async function walletWith(h: ReturnType<typeof payHarness>, usdc: bigint): Promise<PayingWallet> {
    const pair = newSolanaKeyPair();
    await devnet.setTokenBalance(pair.address, usdc);
    const wallet: PayingWallet = { id: `swl_sol_${++walletSeq}`, accountId: "acct_1", chain: "solana", network: devnet.network, address: pair.address };
    h.vault.put(wallet.id, secretOf(pair.secretKey));
    return wallet;
  }

  function harness() {
    return payHarness({
      networks: { [devnet.network]: { usdc: devnet.usdcMint, rpcUrl: devnet.url } },
      balanceOf: (w) => devnet.tokenBalance(w.address as never),
    });
  }

  const req = (url: string) => ({ url, params: {}, actor: "key:agent_sol" });

  it("pays the seller in devnet USDC: goods, settlement decoded, balances moved by the amount exactly, budget confirmed", async () => {
    const h = harness();
    const wallet = await walletWith(h, 500_000n);
    const outcome = await h.engine.pay(wallet, req(seller.url("/report")));

    expect(outcome.paid).toBe(true);
    expect(JSON.parse(new TextDecoder().decode(outcome.goods.body))).toEqual({ goods: "the paid answer", path: "/report" });
    expect(outcome.receipt).toMatchObject({ network: devnet.network, payer: wallet.address, payTo, amount: PRICE });
    expect(outcome.receipt?.transaction).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    expect(await devnet.tokenBalance(wallet.address as never)).toBe(500_000n - PRICE);
    expect(await devnet.tokenBalance(payTo as never)).toBe(PRICE);
    expect(h.budget.spends.get(outcome.receipt?.spendId ?? "")).toMatchObject({ state: "confirmed", transaction: outcome.receipt?.transaction });
    expect(h.vault.opened).toBe(1);
    await h.close();
  });

  it("refuses a wallet short of the amount: 402 insufficient balance, released, nothing signed or sent", async () => {
    const h = harness();
    const wallet = await walletWith(h, 50_000n);
    const paidBefore = seller.paidRequests;
    const problem = await problemOf(h.engine.pay(wallet, req(seller.url("/report"))));
    expect(problem.status).toBe(402);
    expect(problem.message).toMatch(/balance is insufficient/);
    expect(h.events.refusals.map((e) => e.reason)).toEqual(["insufficient_balance"]);
    expect(h.vault.opened).toBe(0);
    expect(seller.paidRequests).toBe(paidBefore);
    expect(await devnet.tokenBalance(wallet.address as never)).toBe(50_000n);
    await h.close();
  });

  it("refuses a 402 whose only requirement is on another Solana network than the wallet's: 402 no_requirement_for_solana", async () => {
    const h = harness();
    const wallet = await walletWith(h, 500_000n);
    // A mainnet wallet in front of a devnet-only seller: the seller's requirement is for another network.
    const elsewhere: PayingWallet = { ...wallet, network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" };
    const h2 = payHarness({
      networks: { [elsewhere.network]: { usdc: devnet.usdcMint, rpcUrl: devnet.url } },
      balanceOf: async () => 500_000n,
    });
    const problem = await problemOf(h2.engine.pay(elsewhere, req(seller.url("/report"))));
    expect(problem.status).toBe(402);
    expect(problem.extensions).toMatchObject({ reason: "no_requirement_for_solana" });
    expect(h2.events.refusals.map((e) => e.reason)).toEqual(["no_requirement_for_solana"]);
    await h.close();
    await h2.close();
  });
});
