import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { actorOfRequest } from "@c402/account-events";
import { escrowV1 } from "@c402/contracts";
import { ProblemError } from "@c402/problems";
import type { ServiceImplementation } from "@c402/rpc";
import type { EscrowActionName } from "@c402/evm-contracts";
import type { EscrowAccounts } from "../domain/account-settings";
import type { EscrowBook } from "../domain/escrow-book";
import { clockOf } from "../domain/escrow-moves";
import { nextStep } from "../domain/next-step";
import type { EscrowRow, EscrowRowState } from "../store/escrow-store";
import type { ArbiterSource } from "../domain/arbiters";
import type { EscrowPolicy, EscrowSettings, EscrowSettingsChange } from "../domain/settings";
import { ESCROW_PRESETS, PRESET_WINDOWS, type EscrowPresetName, type TermsPreset } from "../domain/windows";

const POLICY: Record<EscrowPolicy, escrowV1.EscrowPolicy> = {
  disabled: escrowV1.EscrowPolicy.DISABLED,
  seller_choice: escrowV1.EscrowPolicy.SELLER_CHOICE,
  always: escrowV1.EscrowPolicy.ALWAYS,
};
const PRESET: Record<TermsPreset, escrowV1.EscrowPreset> = {
  instant: escrowV1.EscrowPreset.INSTANT,
  standard: escrowV1.EscrowPreset.STANDARD,
  shipping: escrowV1.EscrowPreset.SHIPPING,
  custom: escrowV1.EscrowPreset.CUSTOM,
};
const SOURCE: Record<ArbiterSource, escrowV1.ArbiterSource> = {
  create: escrowV1.ArbiterSource.CREATE,
  account: escrowV1.ArbiterSource.ACCOUNT,
  service: escrowV1.ArbiterSource.SERVICE,
};

const keyOf = <K extends string, V>(table: Record<K, V>, value: V): K => (Object.keys(table) as K[]).find((k) => table[k] === value) as K;

/** A named preset of a request (the contract refuses unspecified and custom before the handler runs). */
const presetOf = (p: escrowV1.EscrowPreset) => keyOf(PRESET, p) as EscrowPresetName;

export function settingsMessage(s: EscrowSettings) {
  return {
    policy: POLICY[s.policy],
    defaultPreset: PRESET[s.defaultPreset],
    ...(s.arbiterEvm !== null ? { arbiterEvm: s.arbiterEvm } : {}),
    ...(s.arbiterSvm !== null ? { arbiterSvm: s.arbiterSvm } : {}),
    ...(s.updatedAt ? { updatedAt: timestampFromDate(s.updatedAt) } : {}),
  };
}

/** Every preset's windows, as the settings answers list them. */
const presets = () => ESCROW_PRESETS.map((p) => ({ preset: PRESET[p], windows: PRESET_WINDOWS[p] }));

/** Thin handlers: the rules are the domain's (domain/). */
export function escrowRpc(accounts: EscrowAccounts, book: EscrowBook, now: () => Date): ServiceImplementation<typeof escrowV1.EscrowService> {
  const message = (row: EscrowRow) => escrowMessage(row, now());
  return {
    async getEscrowSettings(req) {
      return { settings: settingsMessage(await accounts.get(req.accountId)), presets: presets() };
    },
    async putEscrowSettings(req) {
      const change: EscrowSettingsChange = {
        ...(req.policy !== undefined ? { policy: keyOf(POLICY, req.policy) } : {}),
        ...(req.defaultPreset !== undefined ? { defaultPreset: presetOf(req.defaultPreset) } : {}),
        ...(req.arbiterEvm ? { arbiterEvm: req.arbiterEvm.address ?? null } : {}),
        ...(req.arbiterSvm ? { arbiterSvm: req.arbiterSvm.address ?? null } : {}),
      };
      const r = await accounts.put(req.accountId, change, actorOfRequest(req.actor));
      return { settings: settingsMessage(r.settings), changed: r.changed, arbitersChanged: r.arbitersChanged, presets: presets() };
    },
    async getArbiterReadiness(req) {
      const r = await accounts.readiness(req.accountId);
      return {
        ...(r.evm
          ? {
              evm: {
                arbiter: r.evm.arbiter,
                escrowOffered: r.evm.escrowOffered,
                ...(r.evm.network !== null ? { network: r.evm.network } : {}),
                ...(r.evm.gasBalance !== null ? { gasBalance: r.evm.gasBalance.toString() } : {}),
                ...(r.evm.rulingsAffordable !== null ? { rulingsAffordable: r.evm.rulingsAffordable } : {}),
                rulingsUseServiceGas: false,
                note: r.evm.note,
              },
            }
          : {}),
        ...(r.svm ? { svm: { arbiter: r.svm.arbiter, escrowOffered: false, rulingsUseServiceGas: true, note: r.svm.note } } : {}),
      };
    },
    async resolveEscrowTerms(req) {
      const terms = await accounts.resolveTerms(req.accountId, {
        ...(req.preset !== undefined ? { preset: presetOf(req.preset) } : {}),
        windows: {
          ...(req.settleSeconds !== undefined ? { settleSeconds: req.settleSeconds } : {}),
          ...(req.holdSeconds !== undefined ? { holdSeconds: req.holdSeconds } : {}),
          ...(req.backstopSeconds !== undefined ? { backstopSeconds: req.backstopSeconds } : {}),
        },
        arbiters: {
          ...(req.arbiterEvm !== undefined ? { evm: req.arbiterEvm } : {}),
          ...(req.arbiterSvm !== undefined ? { svm: req.arbiterSvm } : {}),
        },
        forSubSeller: req.forSubSeller,
      });
      return {
        terms: {
          preset: PRESET[terms.preset],
          windows: terms.windows,
          rails: terms.rails.map((r) => ({
            family: r.family,
            ...(r.arbiter !== undefined ? { arbiter: r.arbiter } : {}),
            source: r.source ? SOURCE[r.source] : escrowV1.ArbiterSource.UNSPECIFIED,
            offered: r.offered,
            reason: r.reason,
          })),
        },
      };
    },
    async deposit(req, ctx) {
      const t = req.terms;
      const a = req.authorization;
      if (!t || !a || !t.windows) throw new ProblemError("invalid-request", { message: "A deposit needs its terms, windows and authorization.", errors: [] });
      const r = await book.deposit(
        {
          paymentId: req.paymentId,
          accountId: req.accountId,
          checkoutId: req.checkoutId,
          network: req.network,
          testMode: req.testMode,
          terms: {
            buyer: t.buyer,
            seller: t.seller,
            platform: t.platform,
            feeTo: t.feeTo,
            arbiter: t.arbiter,
            amount: t.amount,
            platformAmount: t.platformAmount,
            fee: t.fee,
            preset: t.preset === escrowV1.EscrowPreset.UNSPECIFIED ? undefined : keyOf(PRESET, t.preset),
            settleSeconds: t.windows.settleSeconds,
            holdSeconds: t.windows.holdSeconds,
            backstopSeconds: t.windows.backstopSeconds,
            salt: t.salt,
          },
          authorization: { validAfter: a.validAfter, validBefore: a.validBefore, nonce: a.nonce, signature: a.signature },
          ...(req.handoffId !== undefined ? { handoffId: req.handoffId } : {}),
        },
        // Answered (pending, when the receipt is late) before the caller stops waiting.
        ctx.deadline,
      );
      return { escrow: message(r.row), pending: r.pending, replayed: r.replayed };
    },
    async getEscrow(req) {
      return { escrow: message(await book.get(req.paymentId, req.accountId)) };
    },
    async listEscrows(req) {
      const state = req.state === escrowV1.EscrowState.UNSPECIFIED ? undefined : keyOf(STATE, req.state);
      const page = await book.list(req.accountId, {
        size: req.pageSize,
        ...(state ? { state } : {}),
        ...(req.startingAfter !== undefined ? { startingAfter: req.startingAfter } : {}),
      });
      return { escrows: page.rows.map(message), hasMore: page.hasMore };
    },
    async prepareAction(req) {
      const p = await book.prepareAction(req.paymentId, req.checkoutId, ACTION[req.action]);
      return {
        escrow: message(p.row),
        signer: p.signer,
        typedDataJson: JSON.stringify(p.typedData, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v)),
        deadline: p.deadline,
        transaction: unsigned(p.row, "", p.transaction),
        gasless: true,
      };
    },
    async submitAction(req) {
      const r = await book.submitAction({
        paymentId: req.paymentId,
        checkoutId: req.checkoutId,
        action: ACTION[req.action],
        deadline: req.deadline,
        v: req.v,
        r: req.r,
        s: req.s,
      });
      return { escrow: message(r.row), pending: r.pending, replayed: r.replayed, ...(r.txHash ? { txHash: r.txHash } : {}) };
    },
    async prepareRuling(req) {
      const p = await book.prepareRuling(req.paymentId, req.accountId, req.toSeller);
      return { escrow: message(p.row), transaction: unsigned(p.row, p.transaction.from, p.transaction) };
    },
  };
}

const ACTION: Record<escrowV1.EscrowAction, EscrowActionName> = {
  [escrowV1.EscrowAction.UNSPECIFIED]: "hold", // refused by the contract's validation before a handler runs
  [escrowV1.EscrowAction.HOLD]: "hold",
  [escrowV1.EscrowAction.APPROVE]: "approve",
  [escrowV1.EscrowAction.REQUEST_REFUND]: "request-refund",
  [escrowV1.EscrowAction.CANCEL]: "cancel",
};

const STATE: Record<Exclude<EscrowRowState, "depositing" | "failed">, escrowV1.EscrowState> = {
  held: escrowV1.EscrowState.HELD,
  on_hold: escrowV1.EscrowState.ON_HOLD,
  escalated: escrowV1.EscrowState.ESCALATED,
  released: escrowV1.EscrowState.RELEASED,
  refunded: escrowV1.EscrowState.REFUNDED,
};

const PRESET_OF_ID = ["instant", "standard", "shipping", "custom"] as const;

function unsigned(row: EscrowRow, from: string, tx: { to: string; data: string }) {
  return { family: "evm", network: row.network, chainId: BigInt(row.network.split(":")[1] ?? "0"), from, to: tx.to, data: tx.data, value: "0" };
}

const stamp = (d: Date | null) => (d ? timestampFromDate(d) : undefined);

/** The sentence of what happens next: the rules' for a held escrow, the deposit's progress before. */
function nextStepOf(row: EscrowRow, now: Date): string {
  if (row.state === "depositing") return "The deposit is sent and waits for the chain's confirmation.";
  if (row.state === "failed") return `The deposit failed: ${row.failure_reason ?? "the chain refused it"}. Nothing was charged.`;
  return nextStep(clockOf(row), now);
}

export function escrowMessage(row: EscrowRow, now: Date) {
  const t = row.terms;
  const state = row.state === "depositing" || row.state === "failed" ? escrowV1.EscrowState.UNSPECIFIED : STATE[row.state];
  return {
    paymentId: row.payment_id,
    checkoutId: row.checkout_id,
    accountId: row.account_id,
    network: row.network,
    contract: row.contract_address,
    escrowId: row.escrow_id,
    state,
    terms: {
      buyer: t.buyer,
      seller: t.seller,
      platform: t.platform,
      feeTo: t.feeTo,
      arbiter: t.arbiter,
      amount: t.amount,
      platformAmount: t.platformAmount,
      fee: t.fee,
      preset: PRESET[PRESET_OF_ID[t.preset] ?? "custom"],
      windows: { settleSeconds: row.settle_seconds, holdSeconds: row.hold_seconds, backstopSeconds: row.backstop_seconds },
      salt: t.salt,
    },
    testMode: row.test_mode,
    ...(row.handoff_id !== null ? { handoffId: row.handoff_id } : {}),
    ...(row.deposit_tx_hash ? { depositTxHash: row.deposit_tx_hash } : {}),
    ...(row.close_tx_hash ? { closeTxHash: row.close_tx_hash } : {}),
    createdAt: timestampFromDate(row.created_at),
    ...(row.deposited_at ? { depositedAt: stamp(row.deposited_at) } : {}),
    ...(row.on_hold_at ? { onHoldAt: stamp(row.on_hold_at) } : {}),
    ...(row.escalated_at ? { escalatedAt: stamp(row.escalated_at) } : {}),
    ...(row.closed_at ? { closedAt: stamp(row.closed_at) } : {}),
    ...(row.deadline_at ? { deadline: stamp(row.deadline_at) } : {}),
    nextStep: nextStepOf(row, now),
    closedBy: row.closed_by ?? "",
    gasless: true,
  };
}
