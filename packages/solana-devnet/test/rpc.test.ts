import {
  appendTransactionMessageInstructions,
  createSolanaRpc,
  createTransactionMessage,
  devnet as devnetCluster,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  partiallySignTransactionMessageWithSigners,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type KeyPairSigner,
} from "@solana/kit";
import { TOKEN_PROGRAM_ADDRESS, findAssociatedTokenPda, getMintDecoder, getTransferCheckedInstruction } from "@solana-program/token";
import { DEVNET_USDC_MINT, SOLANA_DEVNET_GENESIS_HASH, SOLANA_DEVNET_NETWORK, startSolanaDevnet, type SolanaDevnet } from "../src";

const ONE_SOL = 1_000_000_000n;

interface RawAnswer {
  result?: unknown;
  error?: { code: number; message: string; data?: { err?: unknown; logs?: string[] } };
}

async function post(url: string, body: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
  return { status: res.status, text: await res.text() };
}

async function rawRpc(url: string, method: string, params: unknown[] = []): Promise<RawAnswer> {
  const { text } = await post(url, JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }));
  return JSON.parse(text) as RawAnswer;
}

describe("solana devnet over JSON-RPC", () => {
  let devnet: SolanaDevnet;
  let rpc: ReturnType<typeof createSolanaRpc<ReturnType<typeof devnetCluster>>>;
  let buyer: KeyPairSigner;
  let seller: KeyPairSigner;

  beforeAll(async () => {
    // Blocks only on demand: the tests decide when blockhashes age.
    devnet = await startSolanaDevnet({ blockTimeMs: 0 });
    // The devnet cluster's RPC type: it has requestAirdrop.
    rpc = createSolanaRpc(devnetCluster(devnet.url));
    [buyer, seller] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
    await rpc.requestAirdrop(buyer.address, ONE_SOL as never).send();
    await rawRpc(devnet.url, "surfnet_setTokenAccount", [buyer.address, DEVNET_USDC_MINT, { amount: 1_000_000_000 }]);
    await rawRpc(devnet.url, "surfnet_setTokenAccount", [seller.address, DEVNET_USDC_MINT, { amount: 0 }, TOKEN_PROGRAM_ADDRESS]);
  });

  afterAll(async () => {
    await devnet.close();
  });

  const ataOf = async (owner: Address) => (await findAssociatedTokenPda({ owner, mint: DEVNET_USDC_MINT, tokenProgram: TOKEN_PROGRAM_ADDRESS }))[0];

  async function transferMessage(amount: bigint, feePayer: KeyPairSigner | Address = buyer) {
    const { value: latest } = await rpc.getLatestBlockhash().send();
    const transfer = getTransferCheckedInstruction({
      source: await ataOf(buyer.address),
      mint: DEVNET_USDC_MINT,
      destination: await ataOf(seller.address),
      authority: buyer,
      amount,
      decimals: 6,
    });
    return pipe(
      createTransactionMessage({ version: 0 }),
      (m) => (typeof feePayer === "string" ? setTransactionMessageFeePayer(feePayer, m) : setTransactionMessageFeePayerSigner(feePayer, m)),
      (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
      (m) => appendTransactionMessageInstructions([transfer], m),
    );
  }

  it("presents itself as Solana devnet", async () => {
    expect(devnet.network).toBe(SOLANA_DEVNET_NETWORK);
    expect(SOLANA_DEVNET_NETWORK).toBe("solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1");
    expect(await rpc.getGenesisHash().send()).toBe(SOLANA_DEVNET_GENESIS_HASH);
    expect(await rpc.getHealth().send()).toBe("ok");
    const version = await rpc.getVersion().send();
    expect(typeof version["solana-core"]).toBe("string");
    const epoch = await rpc.getEpochInfo().send();
    expect(epoch.absoluteSlot).toBe(await rpc.getSlot().send());
    expect(epoch.blockHeight).toBe(await rpc.getBlockHeight().send());
  });

  it("serves devnet USDC's mint at its real address, readable with the token program's decoder", async () => {
    const { value } = await rpc.getAccountInfo(DEVNET_USDC_MINT, { encoding: "base64" }).send();
    expect(value?.owner).toBe(TOKEN_PROGRAM_ADDRESS);
    const mint = getMintDecoder().decode(Buffer.from(value!.data[0], "base64"));
    expect(mint.decimals).toBe(6);
    expect(mint.isInitialized).toBe(true);
    expect(mint.mintAuthority).toEqual({ __option: "None" });
    // The supply follows the balances the cheat writes.
    expect(mint.supply).toBe(1_000_000_000n);
    const parsed = await rpc.getAccountInfo(DEVNET_USDC_MINT, { encoding: "jsonParsed" }).send();
    expect(parsed.value?.data).toMatchObject({ program: "spl-token", parsed: { type: "mint", info: { decimals: 6, supply: "1000000000" } } });
    expect(await rpc.getMinimumBalanceForRentExemption(82n).send()).toBe(value!.lamports);
  });

  it("lands a TransferChecked between associated token accounts with exact balances, final at once", async () => {
    const signed = await signTransactionMessageWithSigners(await transferMessage(1_250_000n));
    const signature = await rpc.sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: "base64" }).send();
    expect(signature).toBe(getSignatureFromTransaction(signed));
    const { value: statuses } = await rpc.getSignatureStatuses([signature]).send();
    expect(statuses[0]).toMatchObject({ err: null, confirmationStatus: "finalized", confirmations: null });
    expect((await rpc.getTokenAccountBalance(await ataOf(seller.address)).send()).value).toMatchObject({
      amount: "1250000",
      decimals: 6,
      uiAmountString: "1.25",
    });
    expect(await devnet.tokenBalance(buyer.address)).toBe(998_750_000n);
    const landed = await rpc.getTransaction(signature, { maxSupportedTransactionVersion: 0, encoding: "json" }).send();
    expect(landed?.meta?.err).toBeNull();
    expect(landed?.slot).toBe(statuses[0]!.slot);
    expect(landed?.meta?.fee).toBe(5000n);
    const sellerAfter = landed?.meta?.postTokenBalances?.find((balance) => balance.owner === seller.address);
    expect(sellerAfter?.uiTokenAmount.amount).toBe("1250000");
  });

  it("answers an identical resend as a validator: already processed with preflight, the same signature without, never a second transfer", async () => {
    const wire = getBase64EncodedWireTransaction(await signTransactionMessageWithSigners(await transferMessage(10_000n)));
    const first = await rawRpc(devnet.url, "sendTransaction", [wire, { encoding: "base64" }]);
    const sellerBefore = await devnet.tokenBalance(seller.address);
    const again = await rawRpc(devnet.url, "sendTransaction", [wire, { encoding: "base64" }]);
    expect(again.error?.code).toBe(-32002);
    expect(again.error?.message).toBe("Transaction simulation failed: This transaction has already been processed");
    expect(again.error?.data?.err).toBe("AlreadyProcessed");
    const skipped = await rawRpc(devnet.url, "sendTransaction", [wire, { encoding: "base64", skipPreflight: true }]);
    expect(skipped.result).toBe(first.result);
    expect(await devnet.tokenBalance(seller.address)).toBe(sellerBefore);
  });

  it("refuses a transaction whose blockhash expired, and never lands it without preflight either", async () => {
    const signed = await signTransactionMessageWithSigners(await transferMessage(7n));
    const wire = getBase64EncodedWireTransaction(signed);
    devnet.advanceBlocks(151);
    const refused = await rawRpc(devnet.url, "sendTransaction", [wire, { encoding: "base64" }]);
    expect(refused.error).toMatchObject({ code: -32002, message: "Transaction simulation failed: Blockhash not found", data: { err: "BlockhashNotFound" } });
    const skipped = await rawRpc(devnet.url, "sendTransaction", [wire, { encoding: "base64", skipPreflight: true }]);
    expect(skipped.result).toBe(getSignatureFromTransaction(signed));
    const { value } = await rpc.getSignatureStatuses([getSignatureFromTransaction(signed)], { searchTransactionHistory: true }).send();
    expect(value).toEqual([null]);
  });

  it("refuses a failing transaction at preflight with its logs; without preflight it lands failed and pays its fee", async () => {
    const wire = getBase64EncodedWireTransaction(await signTransactionMessageWithSigners(await transferMessage(10n ** 15n)));
    const refused = await rawRpc(devnet.url, "sendTransaction", [wire, { encoding: "base64" }]);
    expect(refused.error?.code).toBe(-32002);
    expect(refused.error?.data?.err).toEqual({ InstructionError: [0, { Custom: 1 }] });
    expect(refused.error?.data?.logs?.some((line) => line.includes("insufficient funds"))).toBe(true);
    const lamportsBefore = (await rpc.getBalance(buyer.address).send()).value;
    const signature = (await rawRpc(devnet.url, "sendTransaction", [wire, { encoding: "base64", skipPreflight: true }])).result as string;
    const { value } = await rpc.getSignatureStatuses([signature as never]).send();
    // kit reads every number of an answer as a bigint.
    expect(value[0]?.err).toEqual({ InstructionError: [0n, { Custom: 1n }] });
    expect((await rpc.getBalance(buyer.address).send()).value).toBe(lamportsBefore - 5000n);
  });

  it("accepts base58 transactions", async () => {
    const { getBase58Decoder, getTransactionEncoder } = await import("@solana/kit");
    const signed = await signTransactionMessageWithSigners(await transferMessage(3n));
    const base58 = getBase58Decoder().decode(getTransactionEncoder().encode(signed));
    const answer = await rawRpc(devnet.url, "sendTransaction", [base58]);
    expect(answer.result).toBe(getSignatureFromTransaction(signed));
  });

  it("simulates a transaction the fee payer has not signed yet when sigVerify is false", async () => {
    const feePayer = await generateKeyPairSigner();
    await devnet.airdrop(feePayer.address, ONE_SOL);
    const sellerBefore = await devnet.tokenBalance(seller.address);
    const partial = await partiallySignTransactionMessageWithSigners(await transferMessage(5n, feePayer.address));
    const wire = getBase64EncodedWireTransaction(partial);
    const { value } = await rpc.simulateTransaction(wire, { encoding: "base64", sigVerify: false }).send();
    expect(value.err).toBeNull();
    expect(value.logs?.length).toBeGreaterThan(0);
    const verified = await rawRpc(devnet.url, "simulateTransaction", [wire, { encoding: "base64", sigVerify: true }]);
    expect(verified.error?.code).toBe(-32003);
    const replaced = await rpc.simulateTransaction(wire, { encoding: "base64", replaceRecentBlockhash: true }).send();
    expect(replaced.value.replacementBlockhash?.blockhash).toBe((await rpc.getLatestBlockhash().send()).value.blockhash);
    // Simulating changed nothing.
    expect(await devnet.tokenBalance(seller.address)).toBe(sellerBefore);
  });

  it("reports landed signatures and null for unknown ones", async () => {
    const airdrop = await devnet.airdrop(seller.address, 2n * ONE_SOL);
    const unknown = (await generateKeyPairSigner()).address; // any 32-byte base58 string is no signature here
    const { value } = await rpc.getSignatureStatuses([airdrop as never, unknown as never], { searchTransactionHistory: true }).send();
    expect(value[0]).toMatchObject({ err: null, confirmationStatus: "finalized" });
    expect(value[1]).toBeNull();
    expect((await rpc.getBalance(seller.address).send()).value).toBe(2n * ONE_SOL);
  });

  it("keeps a blockhash valid for 150 blocks and no longer", async () => {
    const { value: latest } = await rpc.getLatestBlockhash().send();
    expect(latest.lastValidBlockHeight).toBe((await rpc.getBlockHeight().send()) + 150n);
    expect((await rpc.isBlockhashValid(latest.blockhash).send()).value).toBe(true);
    devnet.advanceBlocks(150);
    expect((await rpc.isBlockhashValid(latest.blockhash).send()).value).toBe(true);
    const advanced = await rawRpc(devnet.url, "surfnet_advanceBlocks", [1]);
    expect(advanced.error).toBeUndefined();
    expect((await rpc.isBlockhashValid(latest.blockhash).send()).value).toBe(false);
  });

  it("answers getBlock headers for the blocks whose blockhashes are still valid, as a validator does for the rest", async () => {
    const { value: latest } = await rpc.getLatestBlockhash().send();
    const slot = await rpc.getSlot().send();
    const options = { transactionDetails: "none", rewards: false, maxSupportedTransactionVersion: 0 } as const;
    const block = await rpc.getBlock(slot, options).send();
    expect(block).toMatchObject({ blockhash: latest.blockhash, blockHeight: latest.lastValidBlockHeight - 150n, parentSlot: slot - 1n });
    expect(block?.previousBlockhash).toBe((await rpc.getBlock(slot - 1n, options).send())?.blockhash);
    devnet.advanceBlocks(3);
    expect((await rpc.getBlock(slot, options).send())?.blockhash).toBe(latest.blockhash);
    expect(await rawRpc(devnet.url, "getBlock", [Number(slot) + 100, { transactionDetails: "none" }])).toMatchObject({ error: { code: -32004 } });
    devnet.advanceBlocks(151);
    expect(await rawRpc(devnet.url, "getBlock", [Number(slot), { transactionDetails: "none" }])).toMatchObject({ error: { code: -32001 } });
    expect(await rawRpc(devnet.url, "getBlock", [Number(slot) + 160, { transactionDetails: "full" }])).toMatchObject({ error: { code: -32602 } });
  });

  it("prices a message as a validator does", async () => {
    const { compileTransactionMessage, getCompiledTransactionMessageEncoder, getBase64Decoder } = await import("@solana/kit");
    const message = getBase64Decoder().decode(getCompiledTransactionMessageEncoder().encode(compileTransactionMessage(await transferMessage(1n))));
    const { value } = await rpc.getFeeForMessage(message as never).send();
    expect(value).toBe(5000n);
  });

  it("answers malformed JSON, unknown methods, oversize bodies and batches as JSON-RPC servers do", async () => {
    expect(JSON.parse((await post(devnet.url, "{not json")).text)).toMatchObject({ error: { code: -32700 }, id: null });
    expect(await rawRpc(devnet.url, "eth_chainId")).toMatchObject({ error: { code: -32601 } });
    expect(await rawRpc(devnet.url, "constructor")).toMatchObject({ error: { code: -32601 } });
    expect(await rawRpc(devnet.url, "getBalance", ["not-an-address"])).toMatchObject({ error: { code: -32602 } });
    const oversize = await post(devnet.url, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "getHealth", params: ["x".repeat(2 * 1024 * 1024)] }));
    expect(oversize.status).toBe(413);
    const batch = JSON.parse(
      (
        await post(
          devnet.url,
          JSON.stringify([
            { jsonrpc: "2.0", id: 1, method: "getHealth" },
            { jsonrpc: "2.0", id: 2, method: "getGenesisHash" },
          ]),
        )
      ).text,
    ) as { id: number; result: unknown }[];
    expect(batch).toEqual([
      { jsonrpc: "2.0", id: 1, result: "ok" },
      { jsonrpc: "2.0", id: 2, result: SOLANA_DEVNET_GENESIS_HASH },
    ]);
    const tooMany = Array.from({ length: 101 }, (_, id) => ({ jsonrpc: "2.0", id, method: "getHealth" }));
    expect(JSON.parse((await post(devnet.url, JSON.stringify(tooMany))).text)).toMatchObject({ error: { code: -32600 } });
    expect((await fetch(devnet.url)).status).toBe(405);
  });
});
