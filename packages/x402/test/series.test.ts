import { encodeAbiParameters, keccak256, recoverTypedDataAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { cancelAuthorizationTypedData, EVM_NETWORKS, heldPeriodNonce, REHEARSAL_DOMAIN } from "../src";

const nonce0 = `0x${"ab".repeat(32)}` as const;

describe("heldPeriodNonce", () => {
  it("is keccak256 of the ABI words of period 0's nonce, the period and its window", () => {
    const expected = keccak256(
      encodeAbiParameters([{ type: "bytes32" }, { type: "uint256" }, { type: "uint256" }, { type: "uint256" }], [nonce0, 3n, 1_800_000_000n, 1_800_086_400n]),
    );
    expect(heldPeriodNonce(nonce0, 3, 1_800_000_000n, "1800086400")).toBe(expected);
  });

  it("differs by period and by window, and refuses a nonce that is not 32 bytes", () => {
    const one = heldPeriodNonce(nonce0, 1, 10n, 20n);
    expect(heldPeriodNonce(nonce0, 2, 10n, 20n)).not.toBe(one);
    expect(heldPeriodNonce(nonce0, 1, 11n, 20n)).not.toBe(one);
    expect(() => heldPeriodNonce("0x1234", 1, 10n, 20n)).toThrow(/64 hex/);
  });
});

describe("cancelAuthorizationTypedData", () => {
  it("is USDC's CancelAuthorization under the token's domain: a wallet's signature recovers to the authorizer", async () => {
    const buyer = privateKeyToAccount(`0x${"11".repeat(32)}`);
    const usdc = EVM_NETWORKS["eip155:84532"];
    const domain = { name: usdc.name, version: usdc.version, chainId: usdc.chainId, verifyingContract: usdc.usdc };
    const typed = cancelAuthorizationTypedData(domain, buyer.address.toLowerCase(), nonce0);
    expect(typed.primaryType).toBe("CancelAuthorization");
    expect(typed.types.EIP712Domain).toHaveLength(4);
    expect(typed.message).toEqual({ authorizer: buyer.address, nonce: nonce0 });
    const { EIP712Domain: _, ...types } = typed.types;
    const signature = await buyer.signTypedData({ domain: typed.domain, types, primaryType: typed.primaryType, message: typed.message });
    await expect(recoverTypedDataAddress({ domain: typed.domain, types, primaryType: "CancelAuthorization", message: typed.message, signature })).resolves.toBe(
      buyer.address,
    );
  });

  it("takes the rehearsal domain for a test-mode series", () => {
    const typed = cancelAuthorizationTypedData(
      { ...REHEARSAL_DOMAIN, chainId: 84532, verifyingContract: EVM_NETWORKS["eip155:84532"].usdc },
      `0x${"22".repeat(20)}`,
      nonce0,
    );
    expect(typed.domain.name).toBe(REHEARSAL_DOMAIN.name);
  });
});
