import type { PayPageData } from "../page-data";
import { discoverEvmWallets } from "./evm-wallets";
import { FaceClient, PageError, type PaidBody, type PayAnswer } from "./face-client";
import { connectHost, type HostBridge } from "./host-bridge";
import type { BrowserEventDetail, BrowserEventType } from "./protocol";
import { discoverSolanaWallets } from "./solana-wallets";
import { declined, type PayingWallet } from "./wallets";

/**
 * /static/pay.js: the pay page's script. The page already shows the offer,
 * the QR code and the agent's instructions without it; this adds the buyer's
 * own wallets (EIP-6963 on EVM, the Wallet Standard on Solana), pays with
 * the one picked, and shows the goods and the receipt. Nothing here holds a
 * key: the wallet signs exactly what the face's /prepare returned.
 */

/** How long wallets get to announce themselves before the page offers the phone paths instead. */
const DISCOVERY_MS = 700;
/** How often the page asks again for what it waits on (a handoff, a receipt, an escrow's state). */
const POLL_MS = 2_000;

/** Runs `step` every POLL_MS while the page is visible, until it answers true (done). */
function pollWhileVisible(step: () => Promise<boolean>): void {
  const tick = async () => {
    if (document.visibilityState === "visible" && (await step())) return;
    setTimeout(() => void tick(), POLL_MS);
  };
  setTimeout(() => void tick(), POLL_MS);
}

/** What /e/{id}/status answers (the fields the page uses). */
interface EscrowStatus {
  state: "held" | "on_hold" | "escalated" | "released" | "refunded" | null;
  next_step: string;
  receipt_url: string | null;
}

/** The browser event of each escrow state the host hears of (a refund has none: it is no sale). */
const ESCROW_EVENTS: Partial<Record<NonNullable<EscrowStatus["state"]>, BrowserEventType>> = {
  on_hold: "on_hold",
  escalated: "escalated",
  released: "released",
};

const ESCROW_HEADINGS: Record<NonNullable<EscrowStatus["state"]>, string> = {
  held: "Paid into escrow",
  on_hold: "Escrow on hold",
  escalated: "Escrow escalated to the arbiter",
  released: "Released to the seller",
  refunded: "Refunded",
};

const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T | null;

function main(): void {
  const dataElement = byId("svc-data");
  if (!dataElement?.textContent) return;
  const data = JSON.parse(dataElement.textContent) as PayPageData;
  document.documentElement.classList.add("js");
  const host = connectHost(data);
  const page = new PayPage(data, host);
  host.onSiblingPaid((detail) => page.showPaidElsewhere(detail.receipt_url ?? null));
  if (host.framed && !data.wallet_button) {
    // A read-only product page (create field wallet_button false): buying happens on the service's own page.
    page.readOnly();
  } else {
    const found = (w: PayingWallet) => page.addWallet(w);
    discoverEvmWallets(data.networks, found);
    discoverSolanaWallets(data.networks, found);
    setTimeout(() => page.afterDiscovery(), DISCOVERY_MS);
  }
  page.pollHandoff();
  host.tell("ready", { checkout_id: data.checkout_id });
}

class PayPage {
  private readonly face: FaceClient;
  private readonly list = byId<HTMLUListElement>("svc-wallets");
  private readonly status = byId("svc-status");
  private wallets = 0;
  private busy = false;
  private done = false;

  constructor(
    private readonly data: PayPageData,
    private readonly host: HostBridge,
  ) {
    this.face = new FaceClient(data);
  }

  addWallet(wallet: PayingWallet): void {
    if (!this.list || this.done) return;
    this.wallets++;
    byId("svc-no-wallet")?.setAttribute("hidden", "");
    const item = document.createElement("li");
    const button = document.createElement("button");
    button.type = "button";
    button.className = "svc-wallet";
    if (wallet.icon?.startsWith("data:image/")) {
      const icon = document.createElement("img");
      icon.src = wallet.icon;
      icon.alt = "";
      icon.width = 24;
      icon.height = 24;
      button.append(icon);
    }
    const label = document.createElement("span");
    label.textContent = `Pay with ${wallet.name}`;
    const network = document.createElement("small");
    network.textContent = ` on ${wallet.network.label}`;
    button.append(label, network);
    button.addEventListener("click", () => void this.pay(wallet));
    item.append(button);
    this.list.append(item);
  }

  /** No wallet announced itself: a phone gets open-in-wallet links, a desktop the QR handoff. */
  afterDiscovery(): void {
    if (this.wallets > 0 || this.done) return;
    byId("svc-no-wallet")?.removeAttribute("hidden");
    if (window.matchMedia("(pointer: coarse)").matches) byId("svc-mobile")?.removeAttribute("hidden");
  }

  readOnly(): void {
    byId("svc-wallets")?.setAttribute("hidden", "");
    byId("svc-open")?.removeAttribute("hidden");
  }

  async pay(wallet: PayingWallet): Promise<void> {
    if (this.busy || this.done) return;
    this.busy = true;
    this.say(`Waiting for ${wallet.name}: approve the payment there.`);
    try {
      const answer = await wallet.pay(this.face);
      this.say("");
      await this.showAnswer(answer);
    } catch (err) {
      this.say(
        declined(err)
          ? "You declined in your wallet; nothing was paid."
          : err instanceof PageError
            ? err.message
            : `The wallet failed: ${String((err as Error)?.message ?? err)}`,
        true,
      );
    } finally {
      this.busy = false;
    }
  }

  private async showAnswer(answer: PayAnswer): Promise<void> {
    let body = answer.body;
    if (answer.status === 202 && body.receipt_url) {
      this.say("Submitted on-chain; waiting for it to confirm. Do not pay again.");
      body = await this.awaitReceipt(body);
      this.say("");
    }
    if (this.data.kind === "article" && body.grant) {
      // The article opens with the pass the payment answered.
      this.host.tell("paid", { ...this.eventOf(body), grant: body.grant });
      window.location.assign(`${this.data.face_url}?grant=${encodeURIComponent(body.grant)}`);
      return;
    }
    this.showPaid(body);
    this.host.tell(body.escrow ? "held" : "paid", this.eventOf(body));
    if (body.escrow) this.watchEscrow(body.escrow.status_url, this.eventOf(body));
  }

  /**
   * An escrow's life after the deposit: its status URL polled while the page
   * is visible, each new state said on the page and told to the host
   * (svc:on_hold, svc:escalated, svc:released), until it ends.
   */
  private watchEscrow(statusUrl: string, event: BrowserEventDetail): void {
    const url = new URL(statusUrl, window.location.href);
    let last: string | null = "held";
    pollWhileVisible(async () => {
      const res = await fetch(url.pathname + url.search, { headers: { Accept: "application/json" } }).catch(() => null);
      const status = res?.ok ? ((await res.json()) as EscrowStatus) : null;
      if (!status || status.state === last) return false;
      last = status.state;
      const said = byId("svc-goods");
      if (said && status.next_step) said.textContent = status.next_step;
      const heading = byId("svc-result-heading");
      if (heading && status.state) heading.textContent = ESCROW_HEADINGS[status.state];
      const type = status.state ? ESCROW_EVENTS[status.state] : undefined;
      if (type) this.host.tell(type, { ...event, ...(status.receipt_url ? { receipt_url: status.receipt_url } : {}) });
      return status.state === "released" || status.state === "refunded";
    });
  }

  private eventOf(body: PaidBody) {
    return {
      checkout_id: this.data.checkout_id,
      ...(body.receipt?.id ? { payment_id: body.receipt.id } : body.escrow ? { payment_id: body.escrow.payment_id } : {}),
      ...(body.receipt_url ? { receipt_url: body.receipt_url } : {}),
      test_mode: body.test_mode ?? this.data.face === "test",
      ...(body.receipt?.network ? { network: body.receipt.network } : {}),
    };
  }

  /** A payment still confirming: its receipt URL answers 202 until it settles. */
  private async awaitReceipt(pending: PaidBody): Promise<PaidBody> {
    for (;;) {
      await new Promise((r) => setTimeout(r, POLL_MS));
      const res = await fetch(pending.receipt_url as string, { headers: { Accept: "application/json" } });
      if (res.status === 200) {
        const receipt = (await res.json()) as PaidBody["receipt"] & { receipt_url?: string };
        return { ...pending, receipt, receipt_url: receipt?.receipt_url ?? pending.receipt_url };
      }
    }
  }

  /** The goods and the receipt, in place of the wallets. */
  showPaid(body: PaidBody): void {
    this.done = true;
    byId("svc-choose")?.setAttribute("hidden", "");
    const result = byId("svc-result");
    if (!result) return;
    result.removeAttribute("hidden");
    const heading = byId("svc-result-heading");
    if (heading) heading.textContent = body.escrow ? "Paid into escrow" : body.test_mode ? "Paid (rehearsal: no real money moved)" : "Paid";
    const goods = byId("svc-goods");
    if (goods) {
      const payload = body.fulfillment?.payload;
      if (body.escrow) goods.textContent = body.escrow.note;
      else if (body.fulfillment?.note && payload == null) goods.textContent = body.fulfillment.note;
      else goods.textContent = typeof payload === "string" ? payload : JSON.stringify(payload, null, 2);
    }
    const receipt = byId<HTMLAnchorElement>("svc-receipt");
    const url = body.receipt_url ?? body.escrow?.status_url;
    if (receipt && url) {
      receipt.href = url;
      receipt.textContent = body.escrow ? "Follow the escrow" : `Receipt ${body.receipt?.id ?? ""}`.trim();
      receipt.removeAttribute("hidden");
    }
    result.focus();
  }

  /** Another device (the phone that scanned the QR) or a sibling part paid: show it. */
  showPaidElsewhere(receiptUrl: string | null): void {
    if (this.done) return;
    this.showPaid({
      receipt_url: receiptUrl ?? undefined,
      test_mode: this.data.face === "test",
      fulfillment: { note: "Paid on another device or part of this page." },
    });
  }

  /** The QR's nonce: a payment made by scanning it shows up here. */
  pollHandoff(): void {
    const handoff = this.data.handoff;
    if (!handoff) return;
    pollWhileVisible(async () => {
      if (this.done) return true;
      const res = await fetch(handoff.poll_url, { headers: { Accept: "application/json" } }).catch(() => null);
      if (res?.status !== 200) return false;
      const found = (await res.json()) as { payment_id: string; receipt_url: string; escrow_state: string | null; test_mode: boolean };
      this.showPaidElsewhere(found.receipt_url);
      this.host.tell(found.escrow_state === "held" ? "held" : "paid", {
        checkout_id: this.data.checkout_id,
        payment_id: found.payment_id,
        receipt_url: found.receipt_url,
        test_mode: found.test_mode,
      });
      return true;
    });
  }

  private say(message: string, error = false): void {
    if (!this.status) return;
    this.status.textContent = message;
    this.status.classList.toggle("svc-error", error);
  }
}

main();
