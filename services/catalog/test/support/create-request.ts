import type { CreateRequest } from "../../src/domain/catalog";

/** A valid create for acct_a by a test key (a fresh fingerprint each time), with `over` on top. */
export function createRequest(over: Partial<CreateRequest> = {}): CreateRequest {
  return {
    accountId: "acct_a",
    actor: "key:sk_test_abcd",
    fingerprint: `fp_${Math.random()}`,
    title: "Weather",
    priceUsd: "0.10",
    offer: {},
    createdWithLiveKey: false,
    ...over,
  };
}
