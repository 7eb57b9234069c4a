/**
 * What the pay page's script reads from the page (a JSON data block, never
 * executed): the face it pays, where to prepare and present, and what the
 * page may do when framed. Types only, shared by the server that writes it
 * (pay-page.ts) and the browser code that reads it (client/).
 */
export interface PayPageData {
  v: 1;
  /** Which face this is: a checkout's (/c), an escrow checkout's (/e) or a gated article's wall (/x). */
  kind: "checkout" | "escrow" | "article";
  checkout_id: string;
  face: "live" | "test";
  /** The face's absolute URL (what an agent requests; what a wallet app opens). */
  face_url: string;
  /** POST here with {payer, network}: the typed data or transaction to sign. */
  prepare_url: string;
  /** POST here with the payment in PAYMENT-SIGNATURE (and a series' held periods in the body); carries the page's call parameters and handoff nonce. */
  pay_url: string;
  /** The buyer's call parameters this page was opened with (a relay checkout's origin gets them). */
  params: Record<string, string>;
  /** The nonce this page's QR carries and the path it polls for a payment made on another device; null where the face has none. */
  handoff: { nonce: string; poll_url: string } | null;
  /** The requirements a browser wallet can pay, one per network. */
  networks: PageNetwork[];
  /** The seller asked for in-frame wallet payment (create field `wallet_button`); without it a framed page is a read-only product page. */
  wallet_button: boolean;
  /** The origins allowed to frame this page (the account's embed origins): a host must be one of them to get its events. */
  frame_origins: string[];
  /** A recurring series: the buyer signs period 0 and every held period. */
  series: boolean;
}

export interface PageNetwork {
  /** CAIP-2 id, as in accepts[]. */
  network: string;
  family: "evm" | "solana";
  /** EIP-155 chain id on EVM (the wallet is asked to switch to it before signing); null on Solana. */
  chain_id: number | null;
  /** The Wallet Standard chain on Solana (solana:mainnet, solana:devnet, solana:testnet); null on EVM. */
  wallet_chain: string | null;
  /** Human name of the network. */
  label: string;
  pay_to: string;
}
