import {
  Account,
  Address,
  Asset,
  authorizeEntry,
  Keypair,
  Networks,
  Operation,
  SorobanDataBuilder,
  StrKey,
  TransactionBuilder,
  xdr,
  type FeeBumpTransaction,
  type Transaction,
} from "@stellar/stellar-sdk";
import {
  buildSettlementTransaction,
  checkExactStellarPayment,
  checkSimulatedTransfer,
  decodeExactStellarPayment,
  DEFAULT_LEDGER_SECONDS,
  DEFAULT_MAX_FEE_STROOPS,
  StellarPaymentRejected,
  StellarRejection,
  verifyExactStellarPaymentOffline,
  verifyExactStellarPaymentWithoutChain,
  verifyPayerSignature,
  type ExactStellarPolicy,
  type ExactStellarRequirement,
  type StellarRejectionReason,
} from "../src";
import {
  address,
  authEntry,
  contractCall,
  i128,
  NULL_ACCOUNT,
  PUBNET_USDC,
  SOME_RESOURCE_FEE,
  stellarPayment,
  TESTNET_PASSPHRASE,
  TESTNET_USDC,
  type PaymentChanges,
} from "./exact-stellar-payments";

/** The ledger the checks are run at: the payments' default expiration (1,012) is 12 ledgers ahead. */
const LATEST = 1_000;

describe("exact Stellar payments: decode and static checks", () => {
  const service = Keypair.random();
  const channel = Keypair.random();
  const policy: ExactStellarPolicy = {
    serviceAccounts: [service.publicKey(), channel.publicKey()],
    usdcContract: TESTNET_USDC,
    maxFeeStroops: DEFAULT_MAX_FEE_STROOPS,
    ledgerSeconds: DEFAULT_LEDGER_SECONDS,
  };
  const payer = Keypair.random();
  const requirement: ExactStellarRequirement = { payTo: Keypair.random().publicKey(), asset: TESTNET_USDC, amount: 10_000_000n, maxTimeoutSeconds: 60 };

  function rejectionOf(act: () => unknown): StellarRejectionReason | "accepted" {
    try {
      act();
      return "accepted";
    } catch (err) {
      if (err instanceof StellarPaymentRejected) return err.reason;
      throw err;
    }
  }
  const decoded = (base64: string) => decodeExactStellarPayment(base64, TESTNET_PASSPHRASE);
  /** The payment with `changes`, decoded and checked (static rules and the payer's signature) against `requirement`. */
  async function checked(changes: PaymentChanges = {}, req: ExactStellarRequirement = requirement, latest = LATEST) {
    const base64 = await stellarPayment(payer, requirement, changes);
    return rejectionOf(() => verifyExactStellarPaymentOffline(decoded(base64), req, policy, latest));
  }

  it("accepts the client's payment and decodes what it says", async () => {
    const base64 = await stellarPayment(payer, requirement);
    const payment = decoded(base64);
    expect(rejectionOf(() => verifyExactStellarPaymentOffline(payment, requirement, policy, LATEST))).toBe("accepted");
    expect(payment).toMatchObject({
      transaction: base64,
      networkPassphrase: TESTNET_PASSPHRASE,
      source: NULL_ACCOUNT,
      sourceAccount: NULL_ACCOUNT,
      fee: 100n + SOME_RESOURCE_FEE,
      resourceFee: SOME_RESOURCE_FEE,
      contract: TESTNET_USDC,
      functionName: "transfer",
      payer: payer.publicKey(),
      payTo: requirement.payTo,
      amount: 10_000_000n,
    });
    expect(payment.operationSource).toBeUndefined();
    expect(payment.authEntries).toHaveLength(1);
    expect(payment.authEntries[0]).toMatchObject({ credentials: "address", address: payer.publicKey(), signatureExpirationLedger: 1_012, signed: true });
    expect(typeof payment.authEntries[0]!.nonce).toBe("bigint");
  });

  it("pays a contract (C…) as readily as an account", async () => {
    const toContract = { ...requirement, payTo: PUBNET_USDC };
    const base64 = await stellarPayment(payer, toContract);
    expect(rejectionOf(() => verifyExactStellarPaymentOffline(decoded(base64), toContract, policy, LATEST))).toBe("accepted");
  });

  describe("refuses each tamper with its reason", () => {
    it("the amount", async () => {
      const args = (amount: bigint) => ({ args: [address(payer.publicKey()), address(requirement.payTo), i128(amount)] });
      expect(await checked(args(9_999_999n))).toBe(StellarRejection.wrongAmount);
      expect(await checked(args(10_000_001n))).toBe(StellarRejection.wrongAmount);
      // The right number as another type: a u64 is not the transfer's i128.
      expect(await checked({ args: [address(payer.publicKey()), address(requirement.payTo), xdr.ScVal.scvU64(xdr.Uint64.fromString("10000000"))] })).toBe(
        StellarRejection.wrongAmount,
      );
    });

    it("the destination", async () => {
      expect(await checked({ args: [address(payer.publicKey()), address(Keypair.random().publicKey()), i128(requirement.amount)] })).toBe(
        StellarRejection.wrongRecipient,
      );
      expect(await checked({ args: [address(payer.publicKey()), xdr.ScVal.scvSymbol("seller"), i128(requirement.amount)] })).toBe(
        StellarRejection.wrongRecipient,
      );
    });

    it("the asset: another contract, or a requirement in another token than this chain's USDC", async () => {
      expect(await checked({ contract: PUBNET_USDC })).toBe(StellarRejection.wrongAsset);
      const other = { ...requirement, asset: PUBNET_USDC };
      const base64 = await stellarPayment(payer, other);
      expect(rejectionOf(() => verifyExactStellarPaymentOffline(decoded(base64), other, policy, LATEST))).toBe(StellarRejection.wrongAsset);
    });

    it("two operations, or one that is not a contract call", async () => {
      const secondTransfer = Operation.invokeContractFunction({
        contract: TESTNET_USDC,
        function: "transfer",
        args: [address(payer.publicKey()), address(Keypair.random().publicKey()), i128(1n)],
      });
      expect(rejectionOf(() => decoded(stellarPaymentSync(secondTransfer)))).toBe(StellarRejection.wrongOperation);
      const payment = Operation.payment({ destination: requirement.payTo, asset: Asset.native(), amount: "1" });
      const classic = new TransactionBuilder(new Account(NULL_ACCOUNT, "0"), { fee: "100", networkPassphrase: TESTNET_PASSPHRASE })
        .setTimeout(300)
        .addOperation(payment)
        .build();
      expect(rejectionOf(() => decoded(classic.toXDR()))).toBe(StellarRejection.malformed); // no Soroban data: not a contract call at all
      const upload = new TransactionBuilder(new Account(NULL_ACCOUNT, "0"), { fee: "100", networkPassphrase: TESTNET_PASSPHRASE })
        .setTimeout(300)
        .addOperation(Operation.uploadContractWasm({ wasm: Buffer.from("\0asm\x01\0\0\0", "binary") }))
        .setSorobanData(new SorobanDataBuilder().build())
        .build();
      expect(rejectionOf(() => decoded(upload.toXDR()))).toBe(StellarRejection.wrongOperation);
    });

    it("a function other than transfer(from, to, amount)", async () => {
      expect(await checked({ functionName: "approve" })).toBe(StellarRejection.wrongFunctionName);
      expect(await checked({ functionName: "burn", args: [address(payer.publicKey()), i128(requirement.amount)] })).toBe(StellarRejection.wrongFunctionName);
      expect(await checked({ args: [address(payer.publicKey()), address(requirement.payTo), i128(requirement.amount), xdr.ScVal.scvVoid()] })).toBe(
        StellarRejection.wrongFunctionName,
      );
      expect(await checked({ args: [xdr.ScVal.scvSymbol("payer"), address(requirement.payTo), i128(requirement.amount)] })).toBe(
        StellarRejection.wrongFunctionName,
      );
    });

    it("a sub-invocation in the payer's authorization", async () => {
      const sub = new xdr.SorobanAuthorizedInvocation({
        function: xdr.SorobanAuthorizedFunction.sorobanAuthorizedFunctionTypeContractFn(
          contractCall(TESTNET_USDC, "approve", [address(payer.publicKey()), address(service.publicKey()), i128(1n), xdr.ScVal.scvU32(2_000)]),
        ),
        subInvocations: [],
      });
      expect(await checked({ subInvocations: [sub] })).toBe(StellarRejection.hasSubinvocations);
    });

    it("an authorization entry of the service's account, or with source-account credentials", async () => {
      const call = contractCall(TESTNET_USDC, "transfer", [address(payer.publicKey()), address(requirement.payTo), i128(requirement.amount)]);
      for (const account of [service, channel]) {
        expect(await checked({ extraAuth: [authEntry(account.publicKey(), call)] })).toBe(StellarRejection.facilitatorInAuth);
      }
      const bySource = new xdr.SorobanAuthorizationEntry({
        credentials: xdr.SorobanCredentials.sorobanCredentialsSourceAccount(),
        rootInvocation: new xdr.SorobanAuthorizedInvocation({
          function: xdr.SorobanAuthorizedFunction.sorobanAuthorizedFunctionTypeContractFn(call),
          subInvocations: [],
        }),
      });
      // The settlement's source is the service's account: a source-account entry would be authorized by it.
      expect(await checked({ replaceAuth: [bySource] })).toBe(StellarRejection.unsupportedCredentialType);
      expect(await checked({ extraAuth: [bySource] })).toBe(StellarRejection.unsupportedCredentialType);
    });

    it("the service's account (or a channel) as transaction source, operation source or from", async () => {
      expect(await checked({ txSource: service.publicKey() })).toBe(StellarRejection.unsafeSource);
      expect(await checked({ opSource: channel.publicKey() })).toBe(StellarRejection.unsafeSource);
      // Any operation source: the settlement's operation has none.
      expect(await checked({ opSource: payer.publicKey() })).toBe(StellarRejection.unsafeSource);
      for (const account of [service, channel]) {
        const fromService = { args: [address(account.publicKey()), address(requirement.payTo), i128(requirement.amount)], signer: account };
        expect(await checked(fromService)).toBe(StellarRejection.facilitatorIsPayer);
      }
    });

    it("an expired authorization, or one good for longer than the payment's timeout allows", async () => {
      // 60 s at 5 s a ledger: 12 ledgers, plus the official tolerance of 2.
      expect(await checked({ expirationLedger: LATEST + 14 })).toBe("accepted");
      expect(await checked({ expirationLedger: LATEST + 15 })).toBe(StellarRejection.expirationTooFar);
      expect(await checked({ expirationLedger: LATEST + 1 })).toBe("accepted");
      expect(await checked({ expirationLedger: LATEST })).toBe(StellarRejection.signatureExpired);
      expect(await checked({}, requirement, 1_012)).toBe(StellarRejection.signatureExpired);
      expect(await checked({}, { ...requirement, maxTimeoutSeconds: 30 })).toBe(StellarRejection.expirationTooFar);
    });

    it("a fee above the cap", async () => {
      expect(await checked({ fee: DEFAULT_MAX_FEE_STROOPS })).toBe("accepted");
      expect(await checked({ fee: DEFAULT_MAX_FEE_STROOPS + 1n, resourceFee: DEFAULT_MAX_FEE_STROOPS - 99n })).toBe(StellarRejection.feeExceedsMaximum);
    });

    it("a payment signed for another network", async () => {
      const pubnet = await stellarPayment(payer, requirement, { networkPassphrase: Networks.PUBLIC });
      // The bytes carry no network: the signature, made over the network's id, is what tells.
      expect(rejectionOf(() => checkExactStellarPayment(decoded(pubnet), requirement, policy, LATEST))).toBe("accepted");
      expect(rejectionOf(() => verifyPayerSignature(decoded(pubnet)))).toBe(StellarRejection.signatureInvalid);
      expect(rejectionOf(() => verifyPayerSignature(decodeExactStellarPayment(pubnet, Networks.PUBLIC)))).toBe("accepted");
    });

    it("a payer signature missing, forged, or by another key", async () => {
      expect(await checked({ unsigned: true })).toBe(StellarRejection.missingPayerSignature);
      expect(await checked({ signer: Keypair.random() })).toBe(StellarRejection.signatureInvalid);
      const payment = decoded(await stellarPayment(payer, requirement));
      const credentials = payment.authEntries[0]!.entry.credentials().address();
      const signature = credentials
        .signature()
        .vec()![0]!
        .map()!
        .find((e) => e.key().sym().toString() === "signature")!
        .val()
        .bytes();
      signature[5]! ^= 1;
      expect(rejectionOf(() => verifyPayerSignature(payment))).toBe(StellarRejection.signatureInvalid);
    });

    it("authorization entries besides the payer's, none at all, or one for another call", async () => {
      const call = contractCall(TESTNET_USDC, "transfer", [address(payer.publicKey()), address(requirement.payTo), i128(requirement.amount)]);
      const stranger = Keypair.random();
      expect(await checked({ extraAuth: [authEntry(stranger.publicKey(), call)] })).toBe(StellarRejection.unexpectedPendingSignatures);
      const signedByStranger = await authorizeEntry(authEntry(stranger.publicKey(), call), stranger, 1_010, TESTNET_PASSPHRASE);
      expect(await checked({ extraAuth: [signedByStranger] })).toBe(StellarRejection.unexpectedAuthEntries);
      expect(await checked({ replaceAuth: [] })).toBe(StellarRejection.noAuthEntries);
      expect(await checked({ replaceAuth: [signedByStranger] })).toBe(StellarRejection.missingPayerSignature);
      // The transaction pays payTo; the payer signed a transfer to someone else.
      expect(await checked({ authorizedArgs: [address(payer.publicKey()), address(stranger.publicKey()), i128(requirement.amount)] })).toBe(
        StellarRejection.authInvocationMismatch,
      );
    });

    it("malformed XDR, non-canonical base64, fee bumps and oversize input", async () => {
      const malformed = StellarRejection.malformed;
      const valid = await stellarPayment(payer, requirement);
      const bytes = Buffer.from(valid, "base64");
      expect(rejectionOf(() => decoded(""))).toBe(malformed);
      expect(rejectionOf(() => decoded("not base64!"))).toBe(malformed);
      expect(rejectionOf(() => decoded(undefined as unknown as string))).toBe(malformed);
      expect(rejectionOf(() => decoded(valid.slice(0, -1)))).toBe(malformed);
      expect(rejectionOf(() => decoded(`${valid}====`))).toBe(malformed);
      for (const cut of [1, 4, 40]) expect(rejectionOf(() => decoded(bytes.subarray(0, bytes.length - cut).toString("base64")))).toBe(malformed);
      expect(rejectionOf(() => decoded(Buffer.concat([bytes, Buffer.alloc(4)]).toString("base64")))).toBe(malformed);
      expect(rejectionOf(() => decoded(Buffer.from("hello, world").toString("base64")))).toBe(malformed);
      expect(rejectionOf(() => decoded(Buffer.alloc(8_193, 1).toString("base64")))).toBe(malformed);
      expect(rejectionOf(() => decoded("A".repeat(1_000_000)))).toBe(malformed);
      const withoutSorobanData = await stellarPayment(payer, requirement, { withoutSorobanData: true });
      expect(rejectionOf(() => decoded(withoutSorobanData))).toBe(malformed);
      // The payment wrapped in a fee bump (someone else's fee): not the client's envelope.
      const inner = TransactionBuilder.fromXDR(valid, TESTNET_PASSPHRASE);
      const bump = TransactionBuilder.buildFeeBumpTransaction(Keypair.random(), "200", inner as Transaction, TESTNET_PASSPHRASE);
      expect(rejectionOf(() => decoded(bump.toXDR()))).toBe(malformed);
      // A transaction padded past the bound with a huge argument.
      const big = await stellarPayment(payer, requirement, {
        args: [address(payer.publicKey()), address(requirement.payTo), i128(requirement.amount), xdr.ScVal.scvBytes(Buffer.alloc(9_000))],
      });
      expect(rejectionOf(() => decoded(big))).toBe(malformed);
    });
  });

  /** A payment followed by `extra` (synchronous for readability: payment built ahead). */
  let prebuilt: string;
  beforeAll(async () => {
    prebuilt = await stellarPayment(payer, requirement);
  });
  function stellarPaymentSync(extra: xdr.Operation): string {
    const tx = TransactionBuilder.fromXDR(prebuilt, TESTNET_PASSPHRASE);
    const envelope = tx.toEnvelope();
    envelope
      .v1()
      .tx()
      .operations([...envelope.v1().tx().operations(), extra]);
    return envelope.toXDR("base64");
  }

  describe("with no chain at all (a rehearsal, never submitted)", () => {
    /** The payment with `changes`, decoded and verified with no ledger (static rules but the ledgers', the payer's signature). */
    async function withoutChain(changes: PaymentChanges = {}) {
      const base64 = await stellarPayment(payer, requirement, changes);
      return rejectionOf(() => verifyExactStellarPaymentWithoutChain(decoded(base64), requirement, policy));
    }

    it("judges no ledger: an authorization expired or good for long passes, which the checks at a ledger refuse", async () => {
      expect(await withoutChain()).toBe("accepted");
      expect(await withoutChain({ expirationLedger: LATEST })).toBe("accepted");
      expect(await checked({ expirationLedger: LATEST })).toBe(StellarRejection.signatureExpired);
      expect(await withoutChain({ expirationLedger: LATEST + 10_000 })).toBe("accepted");
      expect(await checked({ expirationLedger: LATEST + 10_000 })).toBe(StellarRejection.expirationTooFar);
    });

    it("holds the payment to every other rule: amount, destination, asset, sub-invocations, the service's accounts (paid to as well)", async () => {
      expect(await withoutChain({ args: [address(payer.publicKey()), address(requirement.payTo), i128(requirement.amount - 1n)] })).toBe(
        StellarRejection.wrongAmount,
      );
      expect(await withoutChain({ args: [address(payer.publicKey()), address(Keypair.random().publicKey()), i128(requirement.amount)] })).toBe(
        StellarRejection.wrongRecipient,
      );
      expect(await withoutChain({ contract: PUBNET_USDC })).toBe(StellarRejection.wrongAsset);
      const inner = new xdr.SorobanAuthorizedInvocation({
        function: xdr.SorobanAuthorizedFunction.sorobanAuthorizedFunctionTypeContractFn(contractCall(PUBNET_USDC, "transfer", [])),
        subInvocations: [],
      });
      expect(await withoutChain({ subInvocations: [inner] })).toBe(StellarRejection.hasSubinvocations);
      expect(await withoutChain({ txSource: service.publicKey() })).toBe(StellarRejection.unsafeSource);
      const fromChannel = { args: [address(channel.publicKey()), address(requirement.payTo), i128(requirement.amount)], signer: channel };
      expect(await withoutChain(fromChannel)).toBe(StellarRejection.facilitatorIsPayer);
      // Paying the service (the balance a simulation's footprint would show): refused with the footprint's reason.
      const toService = { ...requirement, payTo: service.publicKey() };
      const base64 = await stellarPayment(payer, toService);
      expect(rejectionOf(() => verifyExactStellarPaymentOffline(decoded(base64), toService, policy, LATEST))).toBe("accepted");
      expect(rejectionOf(() => verifyExactStellarPaymentWithoutChain(decoded(base64), toService, policy))).toBe(StellarRejection.facilitatorInFootprint);
    });

    it("verifies the payer's signature: by its own key, for this network", async () => {
      expect(await withoutChain({ signer: Keypair.random() })).toBe(StellarRejection.signatureInvalid);
      expect(await withoutChain({ networkPassphrase: Networks.PUBLIC })).toBe(StellarRejection.signatureInvalid);
      expect(await withoutChain({ unsigned: true })).toBe(StellarRejection.missingPayerSignature);
    });

    it("refuses a contract payer, whose authorization only a simulation checks", async () => {
      const wallet = StrKey.encodeContract(Buffer.alloc(32, 9));
      const args = [address(wallet), address(requirement.payTo), i128(requirement.amount)];
      const entry = authEntry(wallet, contractCall(TESTNET_USDC, "transfer", args));
      entry.credentials().address().signatureExpirationLedger(1_010);
      entry.credentials().address().signature(xdr.ScVal.scvVec([]));
      const changes = { args, replaceAuth: [entry] };
      expect(await checked(changes)).toBe("accepted");
      expect(await withoutChain(changes)).toBe(StellarRejection.signatureInvalid);
    });
  });

  describe("the settlement transaction", () => {
    const sorobanData = (resourceFee: bigint) => new SorobanDataBuilder().setResourceFee(resourceFee.toString()).build();
    const build = (base64: string, changes: Partial<Parameters<typeof buildSettlementTransaction>[0]> = {}) =>
      buildSettlementTransaction({
        payment: decoded(base64),
        source: service,
        sequence: 41n,
        sorobanData: sorobanData(30_000n),
        inclusionFee: 100n,
        latestLedger: LATEST,
        serviceAccounts: policy.serviceAccounts,
        maxFee: DEFAULT_MAX_FEE_STROOPS,
        networkPassphrase: TESTNET_PASSPHRASE,
        ...changes,
      });

    it("is the payment's call and authorization from the service's account, its next sequence number, bounded by the authorization, signed", async () => {
      const base64 = await stellarPayment(payer, requirement, { fee: 40_000n, resourceFee: 39_900n });
      const signed = build(base64);
      expect(signed).toMatchObject({
        source: service.publicKey(),
        feeSource: service.publicKey(),
        sequence: 42n,
        fee: 30_100n,
        minLedger: LATEST,
        maxLedger: 1_013,
      });
      const tx = TransactionBuilder.fromXDR(signed.xdr, TESTNET_PASSPHRASE);
      expect(tx.hash().toString("hex")).toBe(signed.hash);
      expect("innerTransaction" in tx).toBe(false);
      const sent = tx as Transaction;
      expect(sent.source).toBe(service.publicKey());
      expect(sent.sequence).toBe("42");
      expect(sent.ledgerBounds).toEqual({ minLedger: LATEST, maxLedger: 1_013 });
      expect(sent.memo.type).toBe("none");
      expect(sent.operations).toHaveLength(1);
      const op = sent.operations[0] as Operation.InvokeHostFunction;
      expect(op.source).toBeUndefined();
      expect(op.func.toXDR("base64")).toBe(decoded(base64).hostFunction.toXDR("base64"));
      expect(op.auth!.map((a) => a.toXDR("base64"))).toEqual(decoded(base64).authEntries.map((a) => a.entry.toXDR("base64")));
      expect(sent.signatures).toHaveLength(1);
      expect(service.verify(sent.hash(), sent.signatures[0]!.signature())).toBe(true);
    });

    it("with channels: the channel's sequence number, the service's account paying in a fee bump", async () => {
      const signed = build(await stellarPayment(payer, requirement), { source: channel, feeBump: service, sequence: 7n });
      expect(signed).toMatchObject({ source: channel.publicKey(), feeSource: service.publicKey(), sequence: 8n, fee: 30_200n });
      const bump = TransactionBuilder.fromXDR(signed.xdr, TESTNET_PASSPHRASE) as FeeBumpTransaction;
      expect(bump.feeSource).toBe(service.publicKey());
      expect(bump.hash().toString("hex")).toBe(signed.hash);
      expect(bump.innerTransaction.source).toBe(channel.publicKey());
      expect(channel.verify(bump.innerTransaction.hash(), bump.innerTransaction.signatures[0]!.signature())).toBe(true);
      expect(service.verify(bump.hash(), bump.signatures[0]!.signature())).toBe(true);
    });

    it("refuses, whatever was checked before, a payment from or authorized by the service's accounts, and a fee above the cap", async () => {
      const fromService = await stellarPayment(payer, requirement, {
        args: [address(channel.publicKey()), address(requirement.payTo), i128(requirement.amount)],
        signer: channel,
      });
      expect(rejectionOf(() => build(fromService))).toBe(StellarRejection.facilitatorIsPayer);
      const call = contractCall(TESTNET_USDC, "transfer", [address(payer.publicKey()), address(requirement.payTo), i128(requirement.amount)]);
      expect(rejectionOf(() => build(stellarPaymentSyncAuth(authEntry(service.publicKey(), call))))).toBe(StellarRejection.facilitatorInAuth);
      expect(rejectionOf(() => build(prebuilt, { sorobanData: sorobanData(DEFAULT_MAX_FEE_STROOPS - 100n) }))).toBe("accepted");
      expect(rejectionOf(() => build(prebuilt, { sorobanData: sorobanData(DEFAULT_MAX_FEE_STROOPS - 99n) }))).toBe(StellarRejection.feeExceedsMaximum);
      // With a fee bump the cap is on what the service pays: the bump's fee (two inclusion fees and the resource fee).
      expect(rejectionOf(() => build(prebuilt, { sorobanData: sorobanData(DEFAULT_MAX_FEE_STROOPS - 100n), source: channel, feeBump: service }))).toBe(
        StellarRejection.feeExceedsMaximum,
      );
    });
  });

  function stellarPaymentSyncAuth(extra: xdr.SorobanAuthorizationEntry): string {
    const envelope = TransactionBuilder.fromXDR(prebuilt, TESTNET_PASSPHRASE).toEnvelope();
    const op = envelope.v1().tx().operations()[0]!.body().invokeHostFunctionOp();
    op.auth([...op.auth(), extra]);
    return envelope.toXDR("base64");
  }

  describe("the simulation's rules", () => {
    const payTo = requirement.payTo;
    const transferEvent = (opts: { contract?: string | null; topics?: xdr.ScVal[]; data?: xdr.ScVal; type?: xdr.ContractEventType } = {}) =>
      new xdr.DiagnosticEvent({
        inSuccessfulContractCall: true,
        event: new xdr.ContractEvent({
          ext: new xdr.ExtensionPoint(0),
          contractId:
            opts.contract === null
              ? null
              : (Address.fromString(opts.contract ?? TESTNET_USDC)
                  .toScAddress()
                  .contractId() as never),
          type: opts.type ?? xdr.ContractEventType.contract(),
          body: new xdr.ContractEventBody(
            0,
            new xdr.ContractEventV0({
              topics: opts.topics ?? [xdr.ScVal.scvSymbol("transfer"), address(payer.publicKey()), address(payTo), xdr.ScVal.scvString("USDC:GA5Z…")],
              data: opts.data ?? i128(requirement.amount),
            }),
          ),
        }),
      });
    const simulated = (events: xdr.DiagnosticEvent[], footprint: xdr.LedgerKey[] = [], minResourceFee = 30_000n) => ({ events, footprint, minResourceFee });
    const judged = (sim: ReturnType<typeof simulated>) => rejectionOf(() => checkSimulatedTransfer(decoded(prebuilt), requirement, sim, policy));
    const diagnostic = transferEvent({ type: xdr.ContractEventType.diagnostic(), topics: [xdr.ScVal.scvSymbol("fn_call")] });

    it("exactly one transfer event of the asset, from the payer to payTo, of the amount (diagnostic events aside)", () => {
      expect(judged(simulated([diagnostic, transferEvent(), diagnostic]))).toBe("accepted");
      expect(judged(simulated([]))).toBe(StellarRejection.noTransferEvents);
      expect(judged(simulated([transferEvent(), transferEvent()]))).toBe(StellarRejection.multipleTransfers);
      const mint = [xdr.ScVal.scvSymbol("mint"), address(payer.publicKey()), address(payTo)];
      expect(judged(simulated([transferEvent(), transferEvent({ topics: mint })]))).toBe(StellarRejection.eventNotTransfer);
      expect(judged(simulated([transferEvent({ topics: [xdr.ScVal.scvSymbol("transfer")] })]))).toBe(StellarRejection.eventNotTransfer);
      expect(judged(simulated([transferEvent({ contract: PUBNET_USDC })]))).toBe(StellarRejection.eventWrongAsset);
      expect(judged(simulated([transferEvent({ contract: null })]))).toBe(StellarRejection.eventMissingContractId);
      const topics = (from: string, to: string) => [xdr.ScVal.scvSymbol("transfer"), address(from), address(to)];
      expect(judged(simulated([transferEvent({ topics: topics(Keypair.random().publicKey(), payTo) })]))).toBe(StellarRejection.eventWrongFrom);
      expect(judged(simulated([transferEvent({ topics: topics(payer.publicKey(), service.publicKey()) })]))).toBe(StellarRejection.eventWrongTo);
      expect(judged(simulated([transferEvent({ data: i128(requirement.amount + 1n) })]))).toBe(StellarRejection.eventWrongAmount);
    });

    it("the payment's declared fee covers the simulated resource fee", () => {
      expect(judged(simulated([transferEvent()], [], 100n + SOME_RESOURCE_FEE))).toBe("accepted");
      expect(judged(simulated([transferEvent()], [], 101n + SOME_RESOURCE_FEE))).toBe(StellarRejection.feeBelowMinimum);
    });

    it("the footprint names none of the service's accounts", () => {
      const usdc = new Asset("USDC", Keypair.random().publicKey());
      const trustline = (account: Keypair) =>
        xdr.LedgerKey.trustline(new xdr.LedgerKeyTrustLine({ accountId: account.xdrAccountId(), asset: usdc.toTrustLineXDRObject() }));
      const balanceOf = (who: string) =>
        xdr.LedgerKey.contractData(
          new xdr.LedgerKeyContractData({
            contract: Address.fromString(TESTNET_USDC).toScAddress(),
            key: xdr.ScVal.scvVec([xdr.ScVal.scvSymbol("Balance"), address(who)]),
            durability: xdr.ContractDataDurability.persistent(),
          }),
        );
      expect(judged(simulated([transferEvent()], [trustline(payer), balanceOf(payTo)]))).toBe("accepted");
      expect(judged(simulated([transferEvent()], [trustline(payer), trustline(service)]))).toBe(StellarRejection.facilitatorInFootprint);
      expect(judged(simulated([transferEvent()], [balanceOf(channel.publicKey())]))).toBe(StellarRejection.facilitatorInFootprint);
      expect(judged(simulated([transferEvent()], [xdr.LedgerKey.account(new xdr.LedgerKeyAccount({ accountId: service.xdrAccountId() }))]))).toBe(
        StellarRejection.facilitatorInFootprint,
      );
    });
  });
});
