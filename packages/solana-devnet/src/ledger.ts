import {
  address,
  appendTransactionMessageInstruction,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase58Decoder,
  getBase64Decoder,
  getTransactionEncoder,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  AccountRole,
  type AccountMeta,
  type AccountSignerMeta,
  type Address,
  type Blockhash,
  type KeyPairSigner,
  type MaybeEncodedAccount,
} from "@solana/kit";
import {
  AccountState,
  TOKEN_PROGRAM_ADDRESS,
  findAssociatedTokenPda,
  getMintEncoder,
  getMintSize,
  getTokenEncoder,
  getTokenSize,
  type Token,
} from "@solana-program/token";
import { FailedTransactionMetadata, LiteSVM, type TransactionMetadata } from "litesvm";
import { readMint, readTokenAccount, tokenAmountJson } from "./accounts";
import { BlockhashQueue } from "./blockhash-queue";
import { DEVNET_USDC_DECIMALS, DEVNET_USDC_MINT, SLOTS_PER_EPOCH, STATUS_CACHE_SLOTS } from "./network";
import { INTERNAL_ERROR, RpcError, TRANSACTION_SIGNATURE_VERIFICATION_FAILURE } from "./rpc-errors";
import { transactionErrorJson, type TransactionErrorJson } from "./transaction-errors";
import { decodeTransaction, transactionFee, type DecodedTransaction } from "./transactions";

/**
 * The first slot and block height. They differ, as on a real cluster where
 * slots get skipped: a client that mixes them up fails here too.
 */
const FIRST_SLOT = 1_000n;
const FIRST_BLOCK_HEIGHT = 900n;

/** How many landed transactions are remembered (getSignatureStatuses, getTransaction, already-processed). */
const REMEMBERED_TRANSACTIONS = 100_000;

const SYSTEM_PROGRAM: Address = address("11111111111111111111111111111111");
const SYSTEM_TRANSFER = 2;
/** What the airdrop faucet holds, topped up when it runs low. */
const FAUCET_LAMPORTS = 500_000_000n * 1_000_000_000n;

export interface TokenBalanceJson {
  accountIndex: number;
  mint: Address;
  owner: Address;
  programId: Address;
  uiTokenAmount: ReturnType<typeof tokenAmountJson>;
}

export interface CompiledInnerInstructionJson {
  programIdIndex: number;
  accounts: number[];
  data: string;
  stackHeight: number;
}

/** What executing (or simulating) a transaction did, in the validator's terms. */
export interface ExecutionOutcome {
  err: TransactionErrorJson | null;
  logs: string[];
  unitsConsumed: bigint;
  returnData: { programId: Address; data: [string, "base64"] } | null;
  innerInstructions: { index: number; instructions: CompiledInnerInstructionJson[] }[];
  /** Null (as the balances) when the transaction was refused before it ran. */
  fee: bigint | null;
  preBalances: bigint[] | null;
  postBalances: bigint[] | null;
  preTokenBalances: TokenBalanceJson[] | null;
  postTokenBalances: TokenBalanceJson[] | null;
  /** The accounts as the transaction left them (a simulation answers with these). */
  accountAfter: (address: Address) => MaybeEncodedAccount;
}

export interface LandedTransaction extends ExecutionOutcome {
  decoded: DecodedTransaction;
  slot: bigint;
  blockTime: number;
}

/** Fields of a token account the surfnet_setTokenAccount cheat may set (surfpool's names). */
export interface TokenAccountUpdate {
  amount?: bigint;
  delegate?: Address | null;
  delegatedAmount?: bigint;
  state?: "initialized" | "frozen";
  closeAuthority?: Address | null;
}

/** An outcome for a transaction refused before it ran (no logs, no units, no balances changed). */
function refusedOutcome(err: TransactionErrorJson): ExecutionOutcome {
  return {
    err,
    logs: [],
    unitsConsumed: 0n,
    returnData: null,
    innerInstructions: [],
    fee: null,
    preBalances: null,
    postBalances: null,
    preTokenBalances: null,
    postTokenBalances: null,
    accountAfter: () => {
      throw new Error("a refused transaction leaves no accounts");
    },
  };
}

/**
 * A Solana ledger on litesvm with a validator's bookkeeping around it: slots
 * and block heights, a queue of recent blockhashes, the status of landed
 * transactions. litesvm's own blockhash check and transaction history are
 * off: it knows a single blockhash, and its history refuses a resent
 * transaction with an error where a validator answers "already processed".
 */
export class SolanaLedger {
  readonly svm = new LiteSVM().withBlockhashCheck(false).withTransactionHistory(0n);
  private readonly blockhashes = new BlockhashQueue(FIRST_BLOCK_HEIGHT, FIRST_SLOT);
  private readonly landed = new Map<string, LandedTransaction>();
  private landedCount = 0n;

  private constructor(private readonly faucet: KeyPairSigner) {
    this.moveClock();
    this.svm.setAccount({
      address: DEVNET_USDC_MINT,
      lamports: lamports(this.svm.minimumBalanceForRentExemption(BigInt(getMintSize()))),
      programAddress: TOKEN_PROGRAM_ADDRESS,
      executable: false,
      // No mint authority: nobody can mint; the cheats write balances (and keep the supply in step).
      data: new Uint8Array(
        getMintEncoder().encode({ mintAuthority: null, supply: 0n, decimals: DEVNET_USDC_DECIMALS, isInitialized: true, freezeAuthority: null }),
      ),
      space: BigInt(getMintSize()),
    });
  }

  static async create(): Promise<SolanaLedger> {
    return new SolanaLedger(await generateKeyPairSigner());
  }

  get currentSlot(): bigint {
    return this.blockhashes.latest.slot;
  }

  get blockHeight(): bigint {
    return this.blockhashes.latest.blockHeight;
  }

  get epoch(): bigint {
    return this.currentSlot / SLOTS_PER_EPOCH;
  }

  get transactionCount(): bigint {
    return this.landedCount;
  }

  latestBlockhash(): { blockhash: Blockhash; lastValidBlockHeight: bigint } {
    const latest = this.blockhashes.latest;
    return { blockhash: latest.blockhash as Blockhash, lastValidBlockHeight: this.blockhashes.lastValidBlockHeight(latest) };
  }

  /** The block produced in `slot` (every slot has one here), while its blockhash is still valid. */
  blockAt(slot: bigint) {
    return this.blockhashes.blockAt(slot);
  }

  isBlockhashValid(blockhash: string): boolean {
    return this.blockhashes.isValid(blockhash, this.blockHeight);
  }

  /** Produces blocks: each one a new slot, block height and blockhash (older blockhashes age out). */
  advanceBlocks(count: number): void {
    for (let i = 0; i < count; i++) this.blockhashes.issueNext();
    this.moveClock();
  }

  private moveClock(): void {
    const clock = this.svm.getClock();
    clock.slot = this.currentSlot;
    clock.epoch = this.epoch;
    clock.unixTimestamp = BigInt(Math.floor(Date.now() / 1000));
    this.svm.setClock(clock);
  }

  getAccount(account: Address): MaybeEncodedAccount {
    return this.svm.getAccount(account);
  }

  /** The decimals of a mint, or null when there is no mint at that address. */
  decimalsOfMint = (mint: Address): number | null => readMint(this.svm.getAccount(mint))?.decimals ?? null;

  private tokenBalances(keys: readonly Address[], accountOf: (key: Address) => MaybeEncodedAccount): TokenBalanceJson[] {
    const balances: TokenBalanceJson[] = [];
    keys.forEach((key, accountIndex) => {
      const account = accountOf(key);
      const token = readTokenAccount(account);
      const decimals = token && this.decimalsOfMint(token.mint);
      if (!token || decimals === null || !account.exists) return;
      balances.push({
        accountIndex,
        mint: token.mint,
        owner: token.owner,
        programId: account.programAddress,
        uiTokenAmount: tokenAmountJson(token.amount, decimals),
      });
    });
    return balances;
  }

  private outcome(
    decoded: DecodedTransaction,
    result: TransactionMetadata | FailedTransactionMetadata,
    before: Map<Address, MaybeEncodedAccount>,
    accountAfter: (key: Address) => MaybeEncodedAccount,
  ): ExecutionOutcome {
    const meta = result instanceof FailedTransactionMetadata ? result.meta() : result;
    const keys = decoded.message.staticAccounts;
    const lamportsOf = (account: MaybeEncodedAccount) => (account.exists ? BigInt(account.lamports) : 0n);
    const returned = meta.returnData();
    const returnedData = returned.data();
    return {
      err: result instanceof FailedTransactionMetadata ? transactionErrorJson(result) : null,
      logs: meta.logs(),
      unitsConsumed: meta.computeUnitsConsumed(),
      returnData: returnedData.length
        ? { programId: getBase58Decoder().decode(returned.programId()) as Address, data: [getBase64Decoder().decode(returnedData), "base64"] }
        : null,
      innerInstructions: meta
        .innerInstructions()
        .map((inner, index) => ({
          index,
          instructions: inner.map((one) => ({
            programIdIndex: one.instruction().programIdIndex(),
            accounts: [...one.instruction().accounts()],
            data: getBase58Decoder().decode(one.instruction().data()),
            stackHeight: one.stackHeight(),
          })),
        }))
        .filter((inner) => inner.instructions.length > 0),
      fee: transactionFee(decoded.message),
      preBalances: keys.map((key) => lamportsOf(before.get(key)!)),
      postBalances: keys.map((key) => lamportsOf(accountAfter(key))),
      preTokenBalances: this.tokenBalances(keys, (key) => before.get(key)!),
      postTokenBalances: this.tokenBalances(keys, accountAfter),
      accountAfter,
    };
  }

  private accountsBefore(decoded: DecodedTransaction): Map<Address, MaybeEncodedAccount> {
    return new Map(decoded.message.staticAccounts.map((key) => [key, this.svm.getAccount(key)]));
  }

  /**
   * What a validator checks before it runs a transaction: a recent blockhash
   * (unless it is replaced), and that the transaction has not landed already.
   */
  private refusal(decoded: DecodedTransaction): ExecutionOutcome | null {
    if (!this.isBlockhashValid(decoded.recentBlockhash)) return refusedOutcome("BlockhashNotFound");
    if (this.landed.has(decoded.signature)) return refusedOutcome("AlreadyProcessed");
    return null;
  }

  /** Runs a transaction without committing it (simulateTransaction and sendTransaction's preflight). */
  simulate(decoded: DecodedTransaction, sigVerify: boolean): ExecutionOutcome {
    if (sigVerify && Object.values(decoded.transaction.signatures).some((signature) => signature === null)) {
      throw new RpcError(TRANSACTION_SIGNATURE_VERIFICATION_FAILURE, "Transaction signature verification failure");
    }
    const refused = this.refusal(decoded);
    if (refused) return refused;
    const before = this.accountsBefore(decoded);
    this.svm.withSigverify(sigVerify);
    const result = this.svm.simulateTransaction(decoded.transaction);
    if (result instanceof FailedTransactionMetadata) {
      const outcome = this.outcome(decoded, result, before, (key) => before.get(key) ?? this.svm.getAccount(key));
      if (sigVerify && outcome.err === "SignatureFailure") {
        throw new RpcError(TRANSACTION_SIGNATURE_VERIFICATION_FAILURE, "Transaction signature verification failure");
      }
      // A simulation that failed changed nothing a caller could read.
      return { ...outcome, postBalances: null, postTokenBalances: null };
    }
    const changed = new Map(
      result
        .postAccounts()
        .map((account): [Address, MaybeEncodedAccount] => [account.address, { ...account, data: new Uint8Array(account.data), exists: true }]),
    );
    return this.outcome(decoded, result.meta(), before, (key) => changed.get(key) ?? before.get(key) ?? this.svm.getAccount(key));
  }

  /**
   * Executes and commits a transaction as a leader would, with no preflight.
   * Returns null when a validator would drop it (stale blockhash, bad or
   * missing signatures, a fee payer that cannot pay): it never lands.
   * A transaction that fails while running lands with its error and pays its fee.
   */
  execute(decoded: DecodedTransaction): LandedTransaction | null {
    if (this.refusal(decoded)) return this.landed.get(decoded.signature) ?? null;
    const before = this.accountsBefore(decoded);
    this.svm.withSigverify(true);
    let result: TransactionMetadata | FailedTransactionMetadata;
    try {
      result = this.svm.sendTransaction(decoded.transaction);
    } catch {
      return null; // litesvm's wrapper refuses a transaction missing signatures: a leader drops it
    }
    const feePayer = decoded.message.staticAccounts[0]!;
    const feePayerBefore = before.get(feePayer)!;
    const feePayerAfter = this.svm.getAccount(feePayer);
    const charged = feePayerBefore.exists && feePayerAfter.exists && feePayerAfter.lamports < feePayerBefore.lamports;
    if (result instanceof FailedTransactionMetadata && !charged) return null;
    const record: LandedTransaction = {
      ...this.outcome(decoded, result, before, (key) => this.svm.getAccount(key)),
      decoded,
      slot: this.currentSlot,
      blockTime: Math.floor(Date.now() / 1000),
    };
    this.landed.set(decoded.signature, record);
    this.landedCount += 1n;
    if (this.landed.size > REMEMBERED_TRANSACTIONS) this.landed.delete(this.landed.keys().next().value!);
    return record;
  }

  /**
   * A landed transaction by signature. Without searchTransactionHistory a
   * validator looks only in its status cache (the last 300 slots).
   */
  landedTransaction(signature: string, searchTransactionHistory = true): LandedTransaction | null {
    const record = this.landed.get(signature);
    if (!record) return null;
    if (!searchTransactionHistory && record.slot + STATUS_CACHE_SLOTS < this.currentSlot) return null;
    return record;
  }

  /** Sends lamports from the devnet's faucet in a real transfer (requestAirdrop), and returns its signature. */
  async airdrop(recipient: Address, amount: bigint): Promise<string> {
    const faucetAccount = this.svm.getAccount(this.faucet.address);
    if (!faucetAccount.exists || BigInt(faucetAccount.lamports) < amount + FAUCET_LAMPORTS / 2n) {
      this.svm.setAccount({
        address: this.faucet.address,
        lamports: lamports(FAUCET_LAMPORTS + amount),
        programAddress: SYSTEM_PROGRAM,
        executable: false,
        data: new Uint8Array(),
        space: 0n,
      });
    }
    const data = new Uint8Array(12);
    new DataView(data.buffer).setUint32(0, SYSTEM_TRANSFER, true);
    new DataView(data.buffer).setBigUint64(4, amount, true);
    const faucetMeta: AccountSignerMeta = { address: this.faucet.address, role: AccountRole.WRITABLE_SIGNER, signer: this.faucet };
    const recipientMeta: AccountMeta = { address: recipient, role: AccountRole.WRITABLE };
    const transfer = {
      programAddress: SYSTEM_PROGRAM,
      accounts: [faucetMeta, recipientMeta],
      data,
    };
    const build = async () => {
      const message = pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayerSigner(this.faucet, m),
        (m) => setTransactionMessageLifetimeUsingBlockhash(this.latestBlockhash(), m),
        (m) => appendTransactionMessageInstruction(transfer, m),
      );
      return decodeTransaction(new Uint8Array(getTransactionEncoder().encode(await signTransactionMessageWithSigners(message))));
    };
    let decoded = await build();
    if (this.landed.has(decoded.signature)) {
      // The same airdrop twice in one block would be the same transaction: the second one waits for the next block.
      this.advanceBlocks(1);
      decoded = await build();
    }
    const landed = this.execute(decoded);
    if (!landed || landed.err) throw new RpcError(INTERNAL_ERROR, `airdrop failed: ${JSON.stringify(landed?.err ?? "dropped")}`);
    return decoded.signature;
  }

  /**
   * Writes the owner's associated token account for a mint (creating it when
   * needed), as surfpool's surfnet_setTokenAccount does. The mint's supply
   * follows the change of amount, so it stays the sum of the balances.
   */
  async setTokenAccount(owner: Address, mint: Address, update: TokenAccountUpdate, tokenProgram?: Address): Promise<Address> {
    const mintAccount = this.svm.getAccount(mint);
    const program = tokenProgram ?? (mintAccount.exists ? mintAccount.programAddress : TOKEN_PROGRAM_ADDRESS);
    const [ata] = await findAssociatedTokenPda({ owner, mint, tokenProgram: program });
    const existing = this.svm.getAccount(ata);
    const current: Token | null = readTokenAccount(existing);
    const next = {
      mint,
      owner,
      amount: update.amount ?? current?.amount ?? 0n,
      delegate: update.delegate !== undefined ? update.delegate : (current?.delegate ?? null),
      state:
        update.state === "frozen"
          ? AccountState.Frozen
          : update.state === "initialized"
            ? AccountState.Initialized
            : (current?.state ?? AccountState.Initialized),
      isNative: current?.isNative ?? null,
      delegatedAmount: update.delegatedAmount ?? current?.delegatedAmount ?? 0n,
      closeAuthority: update.closeAuthority !== undefined ? update.closeAuthority : (current?.closeAuthority ?? null),
    };
    // Token-2022 accounts may carry extensions after the base layout: keep them, rewrite the base.
    const data = existing.exists && current ? new Uint8Array(existing.data) : new Uint8Array(getTokenSize());
    data.set(getTokenEncoder().encode(next), 0);
    const rentExempt = this.svm.minimumBalanceForRentExemption(BigInt(data.length));
    this.svm.setAccount({
      address: ata,
      lamports: lamports(existing.exists && BigInt(existing.lamports) > rentExempt ? BigInt(existing.lamports) : rentExempt),
      programAddress: program,
      executable: false,
      data,
      space: BigInt(data.length),
    });
    this.adjustSupply(mintAccount, next.amount - (current?.amount ?? 0n));
    return ata;
  }

  private adjustSupply(mintAccount: MaybeEncodedAccount, change: bigint): void {
    const mint = readMint(mintAccount);
    if (!mint || !mintAccount.exists || change === 0n) return;
    const supply = mint.supply + change;
    const data = new Uint8Array(mintAccount.data);
    data.set(getMintEncoder().encode({ ...mint, supply: supply < 0n ? 0n : supply }), 0);
    this.svm.setAccount({ ...mintAccount, data });
  }

  /** The amount in the owner's associated token account for a mint (0 when it does not exist). */
  async tokenBalance(owner: Address, mint: Address): Promise<bigint> {
    const mintAccount = this.svm.getAccount(mint);
    const tokenProgram = mintAccount.exists ? mintAccount.programAddress : TOKEN_PROGRAM_ADDRESS;
    const [ata] = await findAssociatedTokenPda({ owner, mint, tokenProgram });
    return readTokenAccount(this.svm.getAccount(ata))?.amount ?? 0n;
  }
}
