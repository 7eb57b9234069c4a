/**
 * The Stellar rail's chain adapter: the x402 exact Stellar payment decoded and
 * checked (the official 2.9 facilitator's rules and stricter ones), the
 * settlement transaction built with the service's account (or a channel) as
 * source, signed, sent and followed over Soroban JSON-RPC.
 */
export { STELLAR_PUBNET, STELLAR_TESTNET, USDC_DECIMALS, networkPassphraseOf, usdcContractOf } from "./networks";
export { MAX_I128, stellarUnitsFromUsdc, usdcFromStellarUnits } from "./amounts";
export { decodeExactStellarPayment, type ExactStellarPayment, type StellarAuthEntry } from "./decode";
export {
  checkExactStellarPayment,
  checkSimulatedTransfer,
  latestExpirationAllowed,
  payerAuthEntry,
  verifyExactStellarPaymentOffline,
  verifyExactStellarPaymentWithoutChain,
  verifyPayerSignature,
  DEFAULT_LEDGER_SECONDS,
  DEFAULT_MAX_FEE_STROOPS,
  type ExactStellarPolicy,
  type ExactStellarRequirement,
  type SimulatedTransfer,
} from "./checks";
export {
  StellarPaymentRejected,
  StellarRejection,
  StellarSendRefusal,
  StellarSendRefused,
  type StellarRejectionReason,
  type StellarSendRefusalReason,
} from "./rejections";
export { assertServiceIsolated, buildSettlementTransaction, type SettlementBuild, type SignedSettlement } from "./settlement-transaction";
export { Lanes, type Lane } from "./lanes";
export { sendByTime, type ClosedLedger } from "./ledger-time";
export {
  StellarChain,
  type SettleOptions,
  type StellarChainOptions,
  type StellarSendResult,
  type StellarSettlement,
  type StellarTransactionStatus,
} from "./stellar-chain";
