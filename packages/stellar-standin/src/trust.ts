import { globalAgent } from "node:https";
import { rootCertificates } from "node:tls";

/**
 * Makes this process's default HTTPS agent trust `certificatePem` besides the
 * usual roots; returns the undo. stellar-sdk (14 and 15) speaks to Soroban RPC
 * through axios, which in Node uses https.globalAgent unless given an agent,
 * and the official x402 client builds its RPC clients itself: this is how it
 * comes to trust the stand-in in-process. Verification stays on; another
 * process trusts it with NODE_EXTRA_CA_CERTS instead.
 */
export function trustCertificateInThisProcess(certificatePem: string): () => void {
  const previous = globalAgent.options.ca;
  const current = previous === undefined ? [...rootCertificates] : Array.isArray(previous) ? [...previous] : [previous];
  globalAgent.options.ca = [...current, certificatePem];
  return () => {
    if (previous === undefined) delete globalAgent.options.ca;
    else globalAgent.options.ca = previous;
  };
}
