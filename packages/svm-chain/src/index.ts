/**
 * The Solana rail's chain adapter: the x402 exact SVM payment decoded and
 * checked (the official 2.27 facilitator's rules and stricter ones), co-signed
 * by the service's fee payer, sent and followed over JSON-RPC.
 */
export { SOLANA_DEVNET, SOLANA_MAINNET, SOLANA_USDC, USDC_DECIMALS } from "./networks";
export { decodeExactSvmPayment, MAX_TRANSACTION_BYTES, type ExactSvmPayment, type SvmInstruction } from "./decode";
export {
  checkExactSvmPayment,
  verifySignerSignatures,
  verifyExactSvmPaymentOffline,
  DEFAULT_MAX_COMPUTE_UNIT_PRICE,
  DEFAULT_MAX_COMPUTE_UNITS,
  type ExactSvmPolicy,
  type ExactSvmRequirement,
} from "./checks";
export { SvmPaymentRejected, SvmRejection, SvmSendRefusal, SvmSendRefused, type SvmRejectionReason, type SvmSendRefusalReason } from "./rejections";
export { associatedTokenAddress } from "./associated-token-address";
export { preparedTransfersTransaction, type SvmTransfer } from "./prepared-transfers";
export { programDerivedAddress } from "./program-derived-address";
export { REHEARSAL_FEE_PAYER, rehearsalPolicy } from "./rehearsal-fee-payer";
export { SvmChain, type SvmChainOptions, type SvmTransactionStatus } from "./svm-chain";
