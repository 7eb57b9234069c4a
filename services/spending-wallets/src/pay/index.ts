export { X402PayEngine, type PayNetwork, type X402PayEngineOptions } from "./x402-pay-engine";
export { MAX_GOODS_BYTES } from "./goods";
