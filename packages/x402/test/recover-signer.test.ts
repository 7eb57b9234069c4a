import { recoverAddress, keccak256, toHex, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { recoverSigner } from "../src/recover-signer";

/** secp256k1's group order. */
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const word = (n: bigint) => n.toString(16).padStart(64, "0");

/** What viem's recoverAddress (the reference, in JavaScript) answers; undefined where it throws. */
async function reference(hash: Hex, signature: string) {
  try {
    return await recoverAddress({ hash, signature: signature as Hex });
  } catch {
    return undefined;
  }
}

describe("recoverSigner (native libsecp256k1) agrees with viem's recoverAddress", () => {
  it("on valid signatures, every v form, high-s twins and broken signatures", async () => {
    for (let i = 0; i < 25; i++) {
      const account = privateKeyToAccount(generatePrivateKey());
      const hash = keccak256(toHex(`digest ${i}`));
      const signature = await account.sign({ hash });
      const r = BigInt(`0x${signature.slice(2, 66)}`);
      const s = BigInt(`0x${signature.slice(66, 130)}`);
      const v = Number.parseInt(signature.slice(130), 16);
      const parity = v === 27 || v === 0 ? 0 : 1;
      const variants = [
        signature,
        `0x${word(r)}${word(s)}${(parity + 27).toString(16)}`,
        `0x${word(r)}${word(s)}0${parity}`,
        `0x${word(r)}${word(s)}0${1 - parity}`, // wrong recovery id: some other address
        `0x${word(r)}${word(N - s)}0${1 - parity}`, // the high-s twin
        `0x${word(r)}${word(s)}1d`, // v = 29
        `0x${word(r)}${word(s)}ff`,
        `0x${word(0n)}${word(s)}1b`,
        `0x${word(r)}${word(0n)}1b`,
        `0x${word(N)}${word(s)}1b`,
        `0x${word(r)}${word(N)}1c`,
        signature.slice(0, 130),
        `${signature}00`,
        signature.toUpperCase().replace("0X", "0x"),
        "0x",
        "not a signature",
      ];
      expect(recoverSigner(hash, signature)).toBe(account.address);
      for (const variant of variants) expect([variant, recoverSigner(hash, variant)]).toEqual([variant, await reference(hash, variant)]);
    }
  });
});
