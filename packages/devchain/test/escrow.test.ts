import {
  C402Escrow,
  ESCROW_ACTION,
  ESCROW_CAUSE,
  ESCROW_STATE,
  ESCROW_TIMED_EXIT,
  escrowDomain,
  escrowId,
  escrowTermsProblem,
  escrowTotal,
  hashEscrowTerms,
  TestReentrantToken,
  TestSmartWallet,
  TestUSDC,
  ZERO_ADDRESS,
  ESCROW_ACTION_TYPES,
  ESCROW_RULING_GAS_BUDGET,
  type EscrowTerms,
} from "@c402/evm-contracts";
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from "@c402/x402";
import {
  encodeFunctionData,
  getAddress,
  domainSeparator,
  hashTypedData,
  parseEventLogs,
  toFunctionSelector,
  toHex,
  type Address,
  type Hex,
  type TransactionReceipt,
} from "viem";
import type { PrivateKeyAccount } from "viem/accounts";
import { DAY, EscrowRig, highS, HOUR, type Mined } from "./support/escrow-rig";

/**
 * The escrow contract on the devchain (ADR 18): deposits under the buyer's EIP-3009 authorization
 * whose nonce is the terms, every transition of the spec's table with exact balances, every
 * forbidden move (wrong wallet, wrong state, too early, too late, after the end), the signed
 * actions (replay across escrows, actions, nonces, chains and contracts; malleability; deadlines)
 * and the reentrancy guard.
 */
describe("C402Escrow on the devchain", () => {
  let rig: EscrowRig;
  const { held, on_hold, escalated, released, refunded } = ESCROW_STATE;

  beforeAll(async () => {
    rig = await EscrowRig.start();
  }, 90_000);
  afterAll(() => rig?.stop());

  const escrowAbi = C402Escrow.abi;
  const decoded = (m: Mined) => m.error?.name;

  /** Balances of everyone an escrow can pay, and of the contract. */
  const everyone = (t: EscrowTerms) => ({ buyer: t.buyer, seller: t.seller, platform: t.platform, feeTo: t.feeTo, arbiter: t.arbiter, contract: rig.escrow });

  async function expectReleased(t: EscrowTerms, before: Record<string, bigint>) {
    expect(await rig.balances(everyone(t))).toEqual({
      ...before,
      seller: before.seller! + t.amount,
      platform: before.platform! + t.platformAmount,
      feeTo: before.feeTo! + t.fee,
      contract: before.contract! - escrowTotal(t),
    });
  }

  async function expectRefunded(t: EscrowTerms, before: Record<string, bigint>) {
    expect(await rig.balances(everyone(t))).toEqual({ ...before, buyer: before.buyer! + escrowTotal(t), contract: before.contract! - escrowTotal(t) });
  }

  const deposited = (r: TransactionReceipt) => parseEventLogs({ abi: escrowAbi, logs: r.logs, eventName: "Deposited" })[0]?.args;
  const onHold = (r: TransactionReceipt) => parseEventLogs({ abi: escrowAbi, logs: r.logs, eventName: "OnHold" })[0]?.args;
  const escalatedEvent = (r: TransactionReceipt) => parseEventLogs({ abi: escrowAbi, logs: r.logs, eventName: "Escalated" })[0]?.args;
  const releasedEvent = (r: TransactionReceipt) => parseEventLogs({ abi: escrowAbi, logs: r.logs, eventName: "Released" })[0]?.args;
  const refundedEvent = (r: TransactionReceipt) => parseEventLogs({ abi: escrowAbi, logs: r.logs, eventName: "Refunded" })[0]?.args;

  describe("placement and views", () => {
    it("sits at the layout address with the test USDC as its token, and cannot be initialized again", async () => {
      expect(getAddress(rig.escrow)).toBe(getAddress("0xc40200000000000000000000000000000000e5c0"));
      expect(await rig.pub.getCode({ address: rig.escrow })).toBe(C402Escrow.deployedBytecode);
      expect(await rig.pub.readContract({ address: rig.escrow, abi: escrowAbi, functionName: "usdc" })).toBe(getAddress(rig.usdc));
      const stranger = await rig.party();
      await expect(rig.call(stranger, "initialize", [stranger.address])).rejects.toThrow(/AlreadyInitialized/);
    });

    it("the TypeScript helpers compute what the contract computes: domain, terms hash, escrow id, action digest", async () => {
      const { terms } = await rig.terms();
      const domain = escrowDomain(rig.chain.chainId, rig.escrow);
      const read = <T>(functionName: string, args: unknown[] = []) =>
        rig.pub.readContract({ address: rig.escrow, abi: escrowAbi, functionName, args } as never) as Promise<T>;
      expect(await read("DOMAIN_SEPARATOR")).toBe(domainSeparator({ domain }));
      expect(await read("hashTerms", [terms])).toBe(hashEscrowTerms(terms));
      expect(await read("escrowId", [terms])).toBe(escrowId(terms, rig.chain.chainId, rig.escrow));
      const id = escrowId(terms, rig.chain.chainId, rig.escrow);
      expect(await read("actionDigest", [id, 3, 7n, 1234n])).toBe(
        hashTypedData({ domain, types: ESCROW_ACTION_TYPES, primaryType: "EscrowAction", message: { escrowId: id, action: 3, nonce: 7n, deadline: 1234n } }),
      );
      const [fields, name, version, chainId, verifyingContract] = await read<readonly [Hex, string, string, bigint, Address]>("eip712Domain");
      expect({ fields, name, version, chainId, verifyingContract }).toEqual({
        fields: "0x0f",
        name: "c402 Escrow",
        version: "1",
        chainId: BigInt(rig.chain.chainId),
        verifyingContract: getAddress(rig.escrow),
      });
      // The ids of actions, states and exits are the contract's.
      for (const [name, id] of [
        ["ACTION_HOLD", ESCROW_ACTION.hold],
        ["ACTION_APPROVE", ESCROW_ACTION.approve],
        ["ACTION_REQUEST_REFUND", ESCROW_ACTION["request-refund"]],
        ["ACTION_CANCEL", ESCROW_ACTION.cancel],
      ] as const)
        expect(await read(name)).toBe(id);
      // Nothing at an id nobody deposited under.
      expect(await rig.escrowView(id)).toMatchObject({ state: ESCROW_STATE.none, buyer: ZERO_ADDRESS, amount: 0n });
      expect(await rig.timedExit(id)).toEqual([ESCROW_TIMED_EXIT.none, 0n, false]);
    });

    it("deploys normally with the token in its constructor (a real network's way): nothing left to initialize, other ids for the same terms", async () => {
      const deployer = await rig.party();
      const wallet = rig.wallet(deployer);
      // (viem decodes no error of a deployment: the revert data is ZeroToken()'s selector.)
      await expect(wallet.deployContract({ abi: escrowAbi, bytecode: C402Escrow.bytecode, args: [ZERO_ADDRESS] })).rejects.toThrow(
        `return data: ${toFunctionSelector("ZeroToken()")})`,
      );
      const other = (await rig.receipt(await wallet.deployContract({ abi: escrowAbi, bytecode: C402Escrow.bytecode, args: [rig.usdc] }))).contractAddress!;
      expect(await rig.pub.readContract({ address: other, abi: escrowAbi, functionName: "usdc" })).toBe(getAddress(rig.usdc));
      await expect(rig.call(deployer, "initialize", [deployer.address], other)).rejects.toThrow(/AlreadyInitialized/);
      const { terms } = await rig.terms();
      const here = await rig.pub.readContract({ address: rig.escrow, abi: escrowAbi, functionName: "escrowId", args: [terms] });
      const there = await rig.pub.readContract({ address: other, abi: escrowAbi, functionName: "escrowId", args: [terms] });
      expect(there).toBe(escrowId(terms, rig.chain.chainId, other));
      expect(there).not.toBe(here);
    });
  });

  describe("deposit", () => {
    it("takes the buyer's authorized total into the contract and records the terms; the escrow is held", async () => {
      const { terms, buyer } = await rig.terms();
      const total = escrowTotal(terms);
      await rig.mint(terms.buyer, total);
      const before = await rig.balances(everyone(terms));
      const auth = await rig.authorize(buyer, terms);
      const receipt = await rig.deposit(terms, auth);
      expect(receipt.status).toBe("success");
      const id = escrowId(terms, rig.chain.chainId, rig.escrow);
      expect(await rig.balances(everyone(terms))).toEqual({ ...before, buyer: 0n, contract: before.contract + total });
      const at = (await rig.pub.getBlock({ blockNumber: receipt.blockNumber })).timestamp;
      expect(await rig.escrowView(id)).toEqual({
        buyer: terms.buyer,
        state: held,
        preset: terms.preset,
        depositedAt: at,
        seller: terms.seller,
        heldAt: 0n,
        platform: terms.platform,
        escalatedAt: 0n,
        feeTo: terms.feeTo,
        settleWindow: terms.settleWindow,
        arbiter: terms.arbiter,
        holdWindow: terms.holdWindow,
        backstopWindow: terms.backstopWindow,
        nonce: 0n,
        amount: terms.amount,
        platformAmount: terms.platformAmount,
        fee: terms.fee,
      });
      expect(await rig.nonce(id)).toBe(0n);
      expect(await rig.timedExit(id)).toEqual([ESCROW_TIMED_EXIT.release, at + terms.settleWindow, false]);
      expect(deposited(receipt)).toEqual({ escrowId: id, buyer: terms.buyer, seller: terms.seller, total, terms });
      // USDC saw the escrow id as the authorization's nonce.
      expect(await rig.pub.readContract({ address: rig.usdc, abi: TestUSDC.abi, functionName: "authorizationState", args: [terms.buyer, id] })).toBe(true);
    });

    it("without a platform or a fee: only the seller is paid", async () => {
      const e = await rig.open({ platform: ZERO_ADDRESS, platformAmount: 0n, fee: 0n, feeTo: ZERO_ADDRESS });
      const before = await rig.balances({ seller: e.terms.seller, contract: rig.escrow });
      await rig.call(e.buyer, "approve", [e.id]);
      expect(await rig.balances({ seller: e.terms.seller, contract: rig.escrow })).toEqual({
        seller: before.seller + e.terms.amount,
        contract: before.contract - e.terms.amount,
      });
    });

    it("accepts the authorization as bytes, from an EOA and from a smart-wallet buyer (EIP-1271)", async () => {
      const owner = await rig.party();
      const deployed = await rig.receipt(
        await rig.wallet(owner).deployContract({ abi: TestSmartWallet.abi, bytecode: TestSmartWallet.bytecode, args: [owner.address] }),
      );
      const walletAddress = deployed.contractAddress!;
      for (const smart of [false, true]) {
        const { terms, buyer } = await rig.terms();
        const t = smart ? { ...terms, buyer: walletAddress } : terms;
        await rig.mint(t.buyer, escrowTotal(t));
        const auth = await rig.authorize(smart ? owner : buyer, t);
        const receipt = await rig.call(rig.relayer, "depositWithSignature", [t, auth.validAfter, auth.validBefore, auth.signature]);
        expect(receipt.status).toBe("success");
        expect(await rig.state(escrowId(t, rig.chain.chainId, rig.escrow))).toBe(held);
        expect(await rig.balance(t.buyer)).toBe(0n);
      }
    });

    it("refuses a replay, from the same relayer or another", async () => {
      const { terms, buyer } = await rig.terms();
      await rig.mint(terms.buyer, escrowTotal(terms) * 2n);
      const auth = await rig.authorize(buyer, terms);
      expect((await rig.deposit(terms, auth)).status).toBe("success");
      await expect(rig.deposit(terms, auth)).rejects.toThrow(/EscrowExists/);
      await expect(rig.deposit(terms, auth, await rig.party())).rejects.toThrow(/EscrowExists/);
      expect(await rig.balance(terms.buyer)).toBe(escrowTotal(terms));
    });

    it("refuses the signature under any other terms: the authorization's nonce is the terms", async () => {
      const { terms, buyer } = await rig.terms();
      await rig.mint(terms.buyer, escrowTotal(terms) * 2n);
      const auth = await rig.authorize(buyer, terms);
      const thief = rig.payee();
      const variants: Partial<EscrowTerms>[] = [
        { seller: thief },
        { arbiter: thief },
        { platform: thief },
        { feeTo: thief },
        { amount: terms.amount - 1n, fee: terms.fee + 1n },
        { settleWindow: terms.settleWindow + 1n },
        { holdWindow: terms.holdWindow + 1n },
        { backstopWindow: terms.backstopWindow + 1n },
        { preset: 2 },
        { salt: `0x${"11".repeat(32)}` },
      ];
      for (const v of variants) await expect(rig.deposit({ ...terms, ...v }, auth)).rejects.toThrow(/invalid signature/);
      expect(await rig.balance(terms.buyer)).toBe(escrowTotal(terms) * 2n);
      expect((await rig.deposit(terms, auth)).status).toBe("success");
    });

    it("is funded only through its own deposit: a direct receiveWithAuthorization by anyone else and a transfer authorization are refused", async () => {
      const { terms, buyer } = await rig.terms();
      const total = escrowTotal(terms);
      await rig.mint(terms.buyer, total);
      const id = escrowId(terms, rig.chain.chainId, rig.escrow);
      const auth = await rig.authorize(buyer, terms);
      // Only the payee (the escrow) may execute a ReceiveWithAuthorization.
      await expect(
        rig.wallet(rig.relayer).writeContract({
          address: rig.usdc,
          abi: TestUSDC.abi,
          functionName: "receiveWithAuthorization",
          args: [terms.buyer, rig.escrow, total, auth.validAfter, auth.validBefore, id, auth.sig.v, auth.sig.r, auth.sig.s],
        }),
      ).rejects.toThrow(/caller must be the payee/);
      // A TransferWithAuthorization of the same amount, to the escrow, with the escrow id as nonce, is no deposit.
      const transferSig = await buyer.signTypedData({
        domain: { name: rig.chain.usdcName, version: rig.chain.usdcVersion, chainId: rig.chain.chainId, verifyingContract: rig.usdc },
        types: TRANSFER_WITH_AUTHORIZATION_TYPES,
        primaryType: "TransferWithAuthorization",
        message: { from: terms.buyer, to: getAddress(rig.escrow), value: total, validAfter: 0n, validBefore: auth.validBefore, nonce: id },
      });
      await expect(rig.call(rig.relayer, "depositWithSignature", [terms, 0n, auth.validBefore, transferSig])).rejects.toThrow(/invalid signature/);
      expect(await rig.state(id)).toBe(ESCROW_STATE.none);
      expect(await rig.balance(terms.buyer)).toBe(total);
      // The right one still works.
      expect((await rig.deposit(terms, auth)).status).toBe("success");
    });

    it("refuses an authorization outside its validity, a malleable (high-s) one and one for another escrow contract", async () => {
      const { terms, buyer } = await rig.terms();
      await rig.mint(terms.buyer, escrowTotal(terms));
      const now = await rig.now();
      await expect(rig.deposit(terms, await rig.authorize(buyer, terms, { validBefore: now - 1n }))).rejects.toThrow(/authorization is expired/);
      await expect(rig.deposit(terms, await rig.authorize(buyer, terms, { validAfter: now + DAY }))).rejects.toThrow(/authorization is not yet valid/);
      const good = await rig.authorize(buyer, terms);
      await expect(rig.deposit(terms, { ...good, sig: highS(good.sig) })).rejects.toThrow(/invalid signature/);
      await expect(rig.deposit(terms, await rig.authorize(buyer, terms, { escrow: rig.payee() }))).rejects.toThrow(/invalid signature/);
      await expect(rig.deposit(terms, await rig.authorize(buyer, terms, { chainId: 8453 }))).rejects.toThrow(/invalid signature/);
      expect(await rig.balance(terms.buyer)).toBe(escrowTotal(terms));
      expect((await rig.deposit(terms, good)).status).toBe("success");
    });

    it("refuses terms that break a rule, each with the reason escrowTermsProblem gives", async () => {
      const { terms, buyer, seller } = await rig.terms();
      const cases: [Partial<EscrowTerms>, string][] = [
        [{ amount: 0n }, "amount is zero"],
        [{ seller: buyer.address }, "seller is the buyer"],
        [{ seller: ZERO_ADDRESS }, "seller is zero"],
        [{ arbiter: ZERO_ADDRESS }, "arbiter is zero"],
        [{ arbiter: buyer.address }, "arbiter is the buyer"],
        [{ arbiter: seller.address }, "arbiter is the seller"],
        [{ platform: ZERO_ADDRESS }, "platform is zero"],
        [{ feeTo: ZERO_ADDRESS }, "fee wallet is zero"],
        [{ preset: 4 }, "unknown preset"],
        [{ settleWindow: HOUR - 1n }, "settle window out of bounds"],
        [{ settleWindow: 30n * DAY + 1n }, "settle window out of bounds"],
        [{ holdWindow: HOUR - 1n }, "hold window out of bounds"],
        [{ holdWindow: 30n * DAY + 1n }, "hold window out of bounds"],
        [{ backstopWindow: HOUR - 1n }, "backstop window out of bounds"],
        [{ backstopWindow: 180n * DAY + 1n }, "backstop window out of bounds"],
        [{ holdWindow: 2n * DAY, backstopWindow: 2n * DAY }, "backstop window not above hold window"],
        [{ holdWindow: 2n * DAY, backstopWindow: 2n * DAY - 1n }, "backstop window not above hold window"],
      ];
      for (const [change, reason] of cases) {
        const t = { ...terms, ...change };
        expect(escrowTermsProblem(t)).toBe(reason);
        const auth = await rig.authorize(buyer, t);
        await expect(rig.deposit(t, auth)).rejects.toThrow(new RegExp(`InvalidTerms\\(string reason\\)\\s+\\(${reason}\\)`));
      }
      // The bounds themselves are allowed, and so are a platform without a cut and a fee wallet without a fee.
      const allowed: Partial<EscrowTerms>[] = [
        { settleWindow: HOUR, holdWindow: HOUR, backstopWindow: HOUR + 1n },
        { settleWindow: 30n * DAY, holdWindow: 30n * DAY, backstopWindow: 180n * DAY, preset: 3 },
        { platform: ZERO_ADDRESS, platformAmount: 0n, feeTo: ZERO_ADDRESS, fee: 0n, preset: 0 },
      ];
      for (const [i, change] of allowed.entries()) {
        const t = { ...terms, ...change, salt: toHex(i + 1, { size: 32 }) };
        expect(escrowTermsProblem(t)).toBeUndefined();
        await rig.mint(t.buyer, escrowTotal(t));
        expect((await rig.deposit(t, await rig.authorize(buyer, t))).status).toBe("success");
      }
    });
  });

  describe("transitions", () => {
    it("held → approve by the buyer → released: seller, platform and fee wallet paid exactly", async () => {
      const e = await rig.open();
      const before = await rig.balances(everyone(e.terms));
      const receipt = await rig.call(e.buyer, "approve", [e.id]);
      expect(await rig.state(e.id)).toBe(released);
      await expectReleased(e.terms, before);
      expect(releasedEvent(receipt)).toEqual({
        escrowId: e.id,
        cause: ESCROW_CAUSE.approved,
        seller: e.terms.seller,
        amount: e.terms.amount,
        platform: e.terms.platform,
        platformAmount: e.terms.platformAmount,
        feeTo: e.terms.feeTo,
        fee: e.terms.fee,
      });
      expect(await rig.timedExit(e.id)).toEqual([ESCROW_TIMED_EXIT.none, 0n, false]);
    });

    it("held → approve signed by the buyer, relayed by anyone → released", async () => {
      const e = await rig.open();
      const before = await rig.balances(everyone(e.terms));
      await rig.submit(e.id, "approve", await rig.signAction(e.buyer, e.id, "approve"));
      expect(await rig.state(e.id)).toBe(released);
      await expectReleased(e.terms, before);
    });

    it("held → the settle window ends → anyone releases; not a second before, and the buyer can no longer hold or dispute then", async () => {
      const e = await rig.open();
      const stranger = await rig.party();
      const [, at, due] = await rig.timedExit(e.id);
      expect(due).toBe(false);
      const before = await rig.balances(everyone(e.terms));
      const early = await rig.mine(stranger, "release", [e.id], { at: at - 1n });
      expect([early.status, decoded(early), early.error?.args]).toEqual(["reverted", "TooEarly", [at]]);
      expect(decoded(await rig.mine(e.buyer, "hold", [e.id], { at }))).toBe("TooLate");
      expect(decoded(await rig.mine(e.buyer, "requestRefund", [e.id], { at }))).toBe("TooLate");
      expect((await rig.timedExit(e.id))[2]).toBe(true);
      const ok = await rig.mine(stranger, "release", [e.id], { at });
      expect(ok.status).toBe("success");
      expect(releasedEvent(ok.receipt!)?.cause).toBe(ESCROW_CAUSE.settle_window_ended);
      expect(await rig.state(e.id)).toBe(released);
      await expectReleased(e.terms, before);
    });

    it("held → hold → on hold: the release waits for the later of the settle window and the hold window, then anyone releases", async () => {
      // A hold early in a long settle window never brings the release forward...
      const early = await rig.open({ settleWindow: 10n * DAY, holdWindow: 2n * DAY });
      const heldAt = (await rig.now()) + 100n;
      const holding = await rig.mine(early.buyer, "hold", [early.id], { at: heldAt });
      expect(holding.status).toBe("success");
      const depositedAt = (await rig.escrowView(early.id)).depositedAt;
      expect(onHold(holding.receipt!)).toEqual({
        escrowId: early.id,
        heldAt,
        releaseAt: depositedAt + 10n * DAY,
      });
      expect(await rig.escrowView(early.id)).toMatchObject({ state: on_hold, heldAt, nonce: 1n });
      expect(await rig.timedExit(early.id)).toEqual([ESCROW_TIMED_EXIT.release, depositedAt + 10n * DAY, false]);
      // ...and one late in it pushes the release to the end of the hold window.
      const late = await rig.open({ settleWindow: 2n * DAY, holdWindow: 5n * DAY });
      const lateDeposit = (await rig.escrowView(late.id)).depositedAt;
      const lateHeld = lateDeposit + 2n * DAY - 1n;
      expect((await rig.mine(late.buyer, "hold", [late.id], { at: lateHeld })).status).toBe("success");
      const [, at] = await rig.timedExit(late.id);
      expect(at).toBe(lateHeld + 5n * DAY);
      const before = await rig.balances(everyone(late.terms));
      const stranger = await rig.party();
      expect(decoded(await rig.mine(stranger, "release", [late.id], { at: at - 1n }))).toBe("TooEarly");
      // While on hold the buyer may still dispute, until the release opens.
      expect(decoded(await rig.mine(late.buyer, "requestRefund", [late.id], { at }))).toBe("TooLate");
      expect(decoded(await rig.mine(late.buyer, "approve", [late.id], { at }))).toBe("WrongState");
      expect(decoded(await rig.mine(late.buyer, "hold", [late.id], { at }))).toBe("WrongState");
      expect((await rig.mine(stranger, "release", [late.id], { at })).status).toBe("success");
      await expectReleased(late.terms, before);
    });

    it("held → request refund → escalated → the arbiter rules for the seller → released", async () => {
      const e = await rig.open();
      const receipt = await rig.call(e.buyer, "requestRefund", [e.id]);
      const view = await rig.escrowView(e.id);
      expect(view).toMatchObject({ state: escalated, nonce: 1n });
      expect(escalatedEvent(receipt)).toEqual({
        escrowId: e.id,
        arbiter: e.terms.arbiter,
        escalatedAt: view.escalatedAt,
        backstopAt: view.escalatedAt + e.terms.backstopWindow,
      });
      expect(await rig.timedExit(e.id)).toEqual([ESCROW_TIMED_EXIT.refund, view.escalatedAt + e.terms.backstopWindow, false]);
      const before = await rig.balances(everyone(e.terms));
      const ruling = await rig.call(e.arbiter, "rule", [e.id, true]);
      expect(releasedEvent(ruling)?.cause).toBe(ESCROW_CAUSE.ruling);
      expect(await rig.state(e.id)).toBe(released);
      await expectReleased(e.terms, before);
    });

    it("a ruling costs the arbiter at most the gas readiness budgets for it (ESCROW_RULING_GAS_BUDGET), paying fresh addresses", async () => {
      // The costliest rulings: each payee (seller, platform, fee wallet; or the buyer) holding no USDC before.
      const used: bigint[] = [];
      for (const toSeller of [true, false]) {
        const e = await rig.open();
        await rig.call(e.buyer, "requestRefund", [e.id]);
        used.push((await rig.call(e.arbiter, "rule", [e.id, toSeller])).gasUsed);
      }
      for (const gas of used) expect(gas).toBeLessThanOrEqual(ESCROW_RULING_GAS_BUDGET);
      // A budget far above the real cost would understate what an arbiter's balance pays for.
      expect(ESCROW_RULING_GAS_BUDGET).toBeLessThanOrEqual(3n * used.reduce((a, b) => (a > b ? a : b)));
    });

    it("held → hold → request refund (signed) → escalated → the arbiter rules for the buyer → refunded in full, fee included", async () => {
      const e = await rig.open();
      await rig.call(e.buyer, "hold", [e.id]);
      await rig.submit(e.id, "request-refund", await rig.signAction(e.buyer, e.id, "request-refund"));
      expect(await rig.state(e.id)).toBe(escalated);
      const before = await rig.balances(everyone(e.terms));
      const ruling = await rig.call(e.arbiter, "rule", [e.id, false]);
      expect(refundedEvent(ruling)).toEqual({
        escrowId: e.id,
        cause: ESCROW_CAUSE.ruling,
        buyer: e.terms.buyer,
        amount: escrowTotal(e.terms),
      });
      expect(await rig.state(e.id)).toBe(refunded);
      await expectRefunded(e.terms, before);
    });

    it("escalated → the backstop passes with no ruling → anyone refunds; only the arbiter could rule, and only before", async () => {
      const e = await rig.open();
      await rig.call(e.buyer, "requestRefund", [e.id]);
      const stranger = await rig.party();
      for (const who of [e.buyer, e.seller, stranger]) await expect(rig.call(who, "rule", [e.id, true])).rejects.toThrow(/Unauthorized/);
      const [exit, at] = await rig.timedExit(e.id);
      expect(exit).toBe(ESCROW_TIMED_EXIT.refund);
      const before = await rig.balances(everyone(e.terms));
      expect(decoded(await rig.mine(stranger, "refund", [e.id], { at: at - 1n }))).toBe("TooEarly");
      expect(decoded(await rig.mine(e.arbiter, "rule", [e.id, true], { at }))).toBe("TooLate");
      expect(decoded(await rig.mine(e.arbiter, "rule", [e.id, false], { at }))).toBe("TooLate");
      const ok = await rig.mine(stranger, "refund", [e.id], { at });
      expect(ok.status).toBe("success");
      expect(refundedEvent(ok.receipt!)?.cause).toBe(ESCROW_CAUSE.backstop);
      expect(await rig.state(e.id)).toBe(refunded);
      await expectRefunded(e.terms, before);
    });

    it("the arbiter may rule until the second before the backstop", async () => {
      const e = await rig.open();
      await rig.call(e.buyer, "requestRefund", [e.id]);
      const [, at] = await rig.timedExit(e.id);
      const before = await rig.balances(everyone(e.terms));
      expect((await rig.mine(e.arbiter, "rule", [e.id, true], { at: at - 1n })).status).toBe("success");
      await expectReleased(e.terms, before);
    });

    it("held → cancel by the seller → refunded; on hold → cancel signed by the seller → refunded; even once the settle window has ended", async () => {
      const a = await rig.open();
      let before = await rig.balances(everyone(a.terms));
      const receipt = await rig.call(a.seller, "cancel", [a.id]);
      expect(refundedEvent(receipt)?.cause).toBe(ESCROW_CAUSE.cancelled);
      expect(await rig.state(a.id)).toBe(refunded);
      await expectRefunded(a.terms, before);

      const b = await rig.open();
      await rig.call(b.buyer, "hold", [b.id]);
      before = await rig.balances(everyone(b.terms));
      await rig.submit(b.id, "cancel", await rig.signAction(b.seller, b.id, "cancel"));
      expect(await rig.state(b.id)).toBe(refunded);
      await expectRefunded(b.terms, before);

      const c = await rig.open();
      const [, at] = await rig.timedExit(c.id);
      before = await rig.balances(everyone(c.terms));
      expect((await rig.mine(c.seller, "cancel", [c.id], { at: at + DAY })).status).toBe("success");
      await expectRefunded(c.terms, before);
    });

    it("refuses every move by the wrong wallet and in the wrong state", async () => {
      const stranger = await rig.party();
      const e = await rig.open();
      // Held: buyer actions by anyone else, the seller's cancel by anyone else, a ruling, a timed exit.
      for (const fn of ["hold", "approve", "requestRefund"] as const)
        for (const who of [e.seller, e.arbiter, stranger]) await expect(rig.call(who, fn, [e.id])).rejects.toThrow(/Unauthorized/);
      for (const who of [e.buyer, e.arbiter, stranger]) await expect(rig.call(who, "cancel", [e.id])).rejects.toThrow(/Unauthorized/);
      await expect(rig.call(e.arbiter, "rule", [e.id, true])).rejects.toThrow(/WrongState/);
      await expect(rig.call(stranger, "refund", [e.id])).rejects.toThrow(/WrongState/);
      await expect(rig.call(stranger, "release", [e.id])).rejects.toThrow(/TooEarly/);
      // On hold: no second hold, no approve, no ruling, no refund.
      await rig.call(e.buyer, "hold", [e.id]);
      await expect(rig.call(e.buyer, "hold", [e.id])).rejects.toThrow(/WrongState/);
      await expect(rig.call(e.buyer, "approve", [e.id])).rejects.toThrow(/WrongState/);
      await expect(rig.call(e.arbiter, "rule", [e.id, false])).rejects.toThrow(/WrongState/);
      await expect(rig.call(stranger, "refund", [e.id])).rejects.toThrow(/WrongState/);
      // Escalated: no buyer action, no cancel, no release; the ruling is the arbiter's only.
      await rig.call(e.buyer, "requestRefund", [e.id]);
      for (const fn of ["hold", "approve", "requestRefund"] as const) await expect(rig.call(e.buyer, fn, [e.id])).rejects.toThrow(/WrongState/);
      await expect(rig.call(e.seller, "cancel", [e.id])).rejects.toThrow(/WrongState/);
      await expect(rig.call(stranger, "release", [e.id])).rejects.toThrow(/WrongState/);
      await expect(rig.call(stranger, "refund", [e.id])).rejects.toThrow(/TooEarly/);
      // No escrow at all.
      const none = `0x${"ab".repeat(32)}` as Hex;
      for (const fn of ["hold", "approve", "requestRefund"] as const) await expect(rig.call(e.buyer, fn, [none])).rejects.toThrow(/UnknownEscrow/);
      await expect(rig.call(e.arbiter, "rule", [none, true])).rejects.toThrow(/UnknownEscrow/);
      await expect(rig.call(stranger, "release", [none])).rejects.toThrow(/UnknownEscrow/);
      await expect(rig.call(stranger, "refund", [none])).rejects.toThrow(/UnknownEscrow/);
      await expect(rig.submit(none, "hold", await rig.signAction(e.buyer, none, "hold", { nonce: 0n }))).rejects.toThrow(/UnknownEscrow/);
    });

    it("a released or refunded escrow never moves again, whoever asks and however late", async () => {
      const stranger = await rig.party();
      const done = [await rig.open(), await rig.open()];
      await rig.call(done[0]!.buyer, "approve", [done[0]!.id]);
      await rig.call(done[1]!.seller, "cancel", [done[1]!.id]);
      await rig.warp(200n * DAY);
      for (const e of done) {
        const state = await rig.state(e.id);
        const before = await rig.balances(everyone(e.terms));
        for (const fn of ["hold", "approve", "requestRefund"] as const) {
          await expect(rig.call(e.buyer, fn, [e.id])).rejects.toThrow(/WrongState/);
          const name = fn === "requestRefund" ? "request-refund" : fn;
          await expect(rig.submit(e.id, name, await rig.signAction(e.buyer, e.id, name))).rejects.toThrow(/WrongState/);
        }
        await expect(rig.call(e.seller, "cancel", [e.id])).rejects.toThrow(/WrongState/);
        await expect(rig.submit(e.id, "cancel", await rig.signAction(e.seller, e.id, "cancel"))).rejects.toThrow(/WrongState/);
        for (const toSeller of [true, false]) await expect(rig.call(e.arbiter, "rule", [e.id, toSeller])).rejects.toThrow(/WrongState/);
        await expect(rig.call(stranger, "release", [e.id])).rejects.toThrow(/WrongState/);
        await expect(rig.call(stranger, "refund", [e.id])).rejects.toThrow(/WrongState/);
        expect(await rig.state(e.id)).toBe(state);
        expect(await rig.balances(everyone(e.terms))).toEqual(before);
        expect(await rig.timedExit(e.id)).toEqual([ESCROW_TIMED_EXIT.none, 0n, false]);
      }
    });
  });

  describe("signed actions", () => {
    let e: Awaited<ReturnType<EscrowRig["open"]>>;
    let other: Awaited<ReturnType<EscrowRig["open"]>>;
    beforeAll(async () => {
      e = await rig.open();
      other = await rig.open();
    });

    it("refuse a malleable (high-s) signature of the right wallet, and v other than 27/28", async () => {
      const signed = await rig.signAction(e.buyer, e.id, "hold");
      await expect(rig.submit(e.id, "hold", { ...signed, sig: highS(signed.sig) })).rejects.toThrow(/ECDSAInvalidSignatureS/);
      await expect(rig.submit(e.id, "hold", { ...signed, sig: { ...signed.sig, v: signed.sig.v - 27 } })).rejects.toThrow(/ECDSAInvalidSignature/);
      expect(await rig.state(e.id)).toBe(held);
    });

    it("refuse a signature made for another chain or another contract", async () => {
      await expect(rig.submit(e.id, "hold", await rig.signAction(e.buyer, e.id, "hold", { chainId: 8453 }))).rejects.toThrow(/Unauthorized/);
      await expect(rig.submit(e.id, "hold", await rig.signAction(e.buyer, e.id, "hold", { escrow: rig.payee(), nonce: 0n }))).rejects.toThrow(/Unauthorized/);
      expect(await rig.state(e.id)).toBe(held);
    });

    it("refuse a signature for another escrow, or for another action", async () => {
      // The buyer of `other` signs for `other`: presenting it for `e` recovers a stranger to `e`.
      const forOther = await rig.signAction(other.buyer, other.id, "hold");
      await expect(rig.submit(e.id, "hold", forOther)).rejects.toThrow(/Unauthorized/);
      // Even the same buyer's signature for another escrow does not carry over.
      const mine = await rig.signAction(e.buyer, other.id, "hold", { nonce: 0n });
      await expect(rig.submit(e.id, "hold", mine)).rejects.toThrow(/Unauthorized/);
      const hold = await rig.signAction(e.buyer, e.id, "hold");
      await expect(rig.submit(e.id, "approve", hold)).rejects.toThrow(/Unauthorized/);
      await expect(rig.submit(e.id, "request-refund", hold)).rejects.toThrow(/Unauthorized/);
      // The buyer cannot sign the seller's cancel, nor the seller the buyer's hold.
      await expect(rig.submit(e.id, "cancel", await rig.signAction(e.buyer, e.id, "cancel"))).rejects.toThrow(/Unauthorized/);
      await expect(rig.submit(e.id, "hold", await rig.signAction(e.seller, e.id, "hold"))).rejects.toThrow(/Unauthorized/);
      await expect(rig.submit(e.id, "hold", await rig.signAction(e.arbiter, e.id, "hold"))).rejects.toThrow(/Unauthorized/);
      expect(await rig.state(e.id)).toBe(held);
      expect(await rig.state(other.id)).toBe(held);
    });

    it("refuse an expired deadline (the deadline's own second still counts) and an unknown action", async () => {
      const now = await rig.now();
      const late = await rig.signAction(e.buyer, e.id, "hold", { deadline: now + 10n });
      expect(decoded(await rig.mine(rig.relayer, "submitAction", [e.id, 1, late.deadline, late.sig.v, late.sig.r, late.sig.s], { at: now + 11n }))).toBe(
        "SignatureExpired",
      );
      for (const action of [0, 5]) {
        const signed = await rig.signAction(e.buyer, e.id, "hold");
        await expect(rig.submit(e.id, action, signed)).rejects.toThrow(/UnknownAction/);
      }
      const onTime = await rig.signAction(e.buyer, e.id, "hold", { deadline: (await rig.now()) + 10n });
      expect(
        (await rig.mine(rig.relayer, "submitAction", [e.id, 1, onTime.deadline, onTime.sig.v, onTime.sig.r, onTime.sig.s], { at: onTime.deadline })).status,
      ).toBe("success");
      expect(await rig.state(e.id)).toBe(on_hold);
    });

    it("are good once: every action moves the nonce, so a signature asked before it is stale", async () => {
      const f = await rig.open();
      const refundAt0 = await rig.signAction(f.buyer, f.id, "request-refund");
      const cancelAt0 = await rig.signAction(f.seller, f.id, "cancel");
      await rig.submit(f.id, "hold", await rig.signAction(f.buyer, f.id, "hold"));
      expect(await rig.nonce(f.id)).toBe(1n);
      // Both actions would be allowed on hold, but their signatures name nonce 0.
      await expect(rig.submit(f.id, "request-refund", refundAt0)).rejects.toThrow(/Unauthorized/);
      await expect(rig.submit(f.id, "cancel", cancelAt0)).rejects.toThrow(/Unauthorized/);
      const refundAt1 = await rig.signAction(f.buyer, f.id, "request-refund");
      await rig.submit(f.id, "request-refund", refundAt1);
      expect(await rig.escrowView(f.id)).toMatchObject({ state: escalated, nonce: 2n });
      await expect(rig.submit(f.id, "request-refund", refundAt1)).rejects.toThrow(/WrongState|Unauthorized/);
    });
  });

  it("the reentrancy guard holds: a token that calls back into the escrow mid-payout is refused", async () => {
    // Real USDC calls nobody back on a transfer; this token does, on a second escrow contract deployed for it.
    const deployer = await rig.party();
    const w = rig.wallet(deployer);
    const token = (await rig.receipt(await w.deployContract({ abi: TestReentrantToken.abi, bytecode: TestReentrantToken.bytecode }))).contractAddress!;
    const escrow = (await rig.receipt(await w.deployContract({ abi: escrowAbi, bytecode: C402Escrow.bytecode, args: [token] }))).contractAddress!;
    const open = async (): Promise<{ id: Hex; terms: EscrowTerms; buyer: PrivateKeyAccount }> => {
      const { terms, buyer } = await rig.terms({ settleWindow: HOUR });
      await rig.mint(terms.buyer, escrowTotal(terms), token);
      const auth = await rig.authorize(buyer, terms, { escrow, token });
      await rig.deposit(terms, auth, rig.relayer, escrow);
      return { id: escrowId(terms, rig.chain.chainId, escrow), terms, buyer };
    };
    const a = await open();
    const b = await open();
    await rig.warp(2n * HOUR);
    // Paying a's seller, the token calls escrow.release(b), which is due: the guard refuses it.
    const reenter = encodeFunctionData({ abi: escrowAbi, functionName: "release", args: [b.id] });
    await rig.receipt(await w.writeContract({ address: token, abi: TestReentrantToken.abi, functionName: "arm", args: [escrow, reenter] }));
    await rig.call(a.buyer, "approve", [a.id], escrow);
    const read = <T>(functionName: "reentryAttempted" | "reentrySucceeded" | "reentryError") =>
      rig.pub.readContract({ address: token, abi: TestReentrantToken.abi, functionName }) as Promise<T>;
    expect(await read("reentryAttempted")).toBe(true);
    expect(await read("reentrySucceeded")).toBe(false);
    expect(await read("reentryError")).toBe(toFunctionSelector("ReentrancyGuardReentrantCall()"));
    expect(await rig.state(a.id, escrow)).toBe(released);
    expect(await rig.state(b.id, escrow)).toBe(held);
    expect(await rig.balance(a.terms.seller, token)).toBe(a.terms.amount);
    // Outside a payout the same call goes through.
    await rig.call(await rig.party(), "release", [b.id], escrow);
    expect(await rig.state(b.id, escrow)).toBe(released);
    expect(await rig.balance(escrow, token)).toBe(0n);
  });
});
