import { newId } from "@c402/ids";
import { generateKeyringText, parseKeyring, SealedSecretError, SecretSealer } from "@c402/sealed-secrets";
import { describeWith } from "@c402/testkit";
import type { PayingWallet } from "../src";
import { KeyRotation } from "../src/domain/key-rotation";
import { selfCheck } from "../src/domain/self-check";
import { secretKeyBytes, type WalletSecret } from "../src/domain/wallet-keys";
import { openWalletSecret, SealedKeyVault } from "../src/domain/wallet-vault";
import { walletStore, type SpendingWalletsDb } from "../src/store/wallet-store";
import { seedWallet } from "./support/seed-wallet";
import { walletDatabase } from "./support/wallet-db";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

describeWith("postgres")("sealed wallet secrets", () => {
  let env: Awaited<ReturnType<typeof walletDatabase>>;
  let db: SpendingWalletsDb;

  beforeAll(async () => {
    env = await walletDatabase();
    db = env.db;
  });
  afterAll(() => env.close());

  const keyOf = (vault: SealedKeyVault, wallet: PayingWallet) => vault.withKey(wallet, async (key) => hex(key));

  describe("G23: a secret opens only in its own wallet's row", () => {
    const sealer = new SecretSealer(parseKeyring(generateKeyringText("k1")));
    const vault = () => new SealedKeyVault(db, sealer);

    it("opens in its row; hands the raw key, then wipes it", async () => {
      const { wallet, secret } = await seedWallet(db, { sealer });
      expect(await keyOf(vault(), wallet)).toBe(hex(secretKeyBytes("base", secret as WalletSecret)));
      let handed: Uint8Array | undefined;
      await vault().withKey(wallet, async (key) => {
        handed = key;
      });
      expect(handed?.every((b) => b === 0)).toBe(true);
    });

    it("does not open when moved to another wallet's row, another account's or another chain's", async () => {
      const accountId = newId("account");
      const a = await seedWallet(db, { sealer, accountId });
      const b = await seedWallet(db, { sealer });
      const aSolana = await seedWallet(db, { sealer, accountId, chain: "solana" });
      const sealedA = (await walletStore.byId(db, a.wallet.id))?.sealed_secret as string;
      // Another wallet's row (and so another id and account in the AAD).
      await db.updateTable("wallets").set({ sealed_secret: sealedA }).where("id", "=", b.wallet.id).execute();
      await expect(keyOf(vault(), b.wallet)).rejects.toThrow(SealedSecretError);
      // The same account's wallet on the other chain.
      await db.updateTable("wallets").set({ sealed_secret: sealedA }).where("id", "=", aSolana.wallet.id).execute();
      await expect(keyOf(vault(), aSolana.wallet)).rejects.toThrow(SealedSecretError);
      // The right id with another account or chain in the AAD.
      expect(() => openWalletSecret(sealer, { ...a.wallet, accountId: newId("account") }, sealedA)).toThrow(SealedSecretError);
      expect(() => openWalletSecret(sealer, { ...a.wallet, chain: "solana" }, sealedA)).toThrow(SealedSecretError);
      expect(openWalletSecret(sealer, a.wallet, sealedA)).toEqual(a.secret);
    });

    it("fails on any flipped bit of the sealed value", async () => {
      const { wallet } = await seedWallet(db, { sealer });
      const sealed = (await walletStore.byId(db, wallet.id))?.sealed_secret as string;
      const [version, keyId, ...segments] = sealed.split(".");
      for (let s = 0; s < segments.length; s++) {
        const bytes = Buffer.from(segments[s] as string, "base64url");
        for (const bit of [0, 7, bytes.length * 8 - 1]) {
          const flipped = Buffer.from(bytes);
          flipped[bit >> 3] = (flipped[bit >> 3] as number) ^ (1 << (bit & 7));
          const copy = [...segments];
          copy[s] = flipped.toString("base64url");
          expect(() => openWalletSecret(sealer, wallet, [version, keyId, ...copy].join("."))).toThrow(SealedSecretError);
        }
      }
    });
  });

  describe("G24: the master key rotates online and crash-safe", () => {
    const oldRing = generateKeyringText("k1");
    const newRing = `${generateKeyringText("k2")},${oldRing}`;
    const oldSealer = new SecretSealer(parseKeyring(oldRing));
    const rotated = new SecretSealer(parseKeyring(newRing));
    // The new key alone, as the keyring is once the old key is retired.
    const newOnly = new SecretSealer(parseKeyring(newRing.split(",")[0] as string));

    async function seedMany(n: number) {
      const seeded: { wallet: PayingWallet; key: string }[] = [];
      for (let i = 0; i < n; i++) {
        const { wallet, secret } = await seedWallet(db, { sealer: oldSealer, chain: i % 2 === 0 ? "base" : "solana" });
        seeded.push({ wallet, key: hex(secretKeyBytes(wallet.chain, secret as WalletSecret)) });
      }
      return seeded;
    }

    it("rotates while 100 concurrent withKey calls run: every call opens the right key; then every wallet is under the new key", async () => {
      await db.deleteFrom("wallets").where("key_id", "<>", "none").execute();
      const seeded = await seedMany(12);
      const rotation = new KeyRotation(db, rotated, { batchSize: 3 });
      const vault = new SealedKeyVault(db, rotated);
      const signs = Array.from({ length: 100 }, async (_, i) => {
        const s = seeded[i % seeded.length] as (typeof seeded)[number];
        await new Promise((r) => setTimeout(r, i % 7));
        expect(await keyOf(vault, s.wallet)).toBe(s.key);
      });
      await Promise.all([...signs, rotation.untilDone()]);
      expect(await rotation.stillRetired()).toEqual({ count: 0, keyIds: [] });
      // The old key can now be dropped: a keyring of the new key alone opens every wallet.
      for (const s of seeded) expect(await keyOf(new SealedKeyVault(db, newOnly), s.wallet)).toBe(s.key);
    }, 60_000);

    it("a crash mid re-wrap, 20 times: every wallet still opens; the self-check names what is left; the sweep then finishes", async () => {
      await db.deleteFrom("wallets").where("key_id", "<>", "none").execute();
      const seeded = await seedMany(24);
      const vault = new SealedKeyVault(db, rotated);
      for (let crash = 0; crash < 20; crash++) {
        // The row's write is done but not committed when the process dies (crash % 3 rows committed before).
        let rows = 0;
        const rotation = new KeyRotation(db, rotated, {
          batchSize: 5,
          beforeCommit: () => {
            if (rows++ === crash % 3) throw new Error("killed mid re-wrap");
          },
        });
        await expect(rotation.round()).rejects.toThrow("killed mid re-wrap");
        for (const s of seeded) expect(await keyOf(vault, s.wallet)).toBe(s.key);
      }
      const rotation = new KeyRotation(db, rotated);
      const left = await rotation.stillRetired();
      expect(left.count).toBeGreaterThan(0);
      const problems = await selfCheck({ sealer: rotated, chains: new Map(), rotation });
      expect(problems).toEqual([{ component: "keyring", message: `${left.count} wallet(s) still sealed under retired key(s) k1` }]);
      await rotation.untilDone();
      expect(await selfCheck({ sealer: rotated, chains: new Map(), rotation })).toEqual([]);
      const keyIds = await db.selectFrom("wallets").select("key_id").where("key_id", "<>", "none").execute();
      expect(new Set(keyIds.map((r) => r.key_id))).toEqual(new Set(["k2"]));
      for (const s of seeded) expect(await keyOf(new SealedKeyVault(db, newOnly), s.wallet)).toBe(s.key);
    }, 60_000);
  });
});
