import { keccak256, parseTransaction, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { NonceSpentError, TransactionSender, type NonceReservation, type SenderRpc } from "../src";

const TO: Address = "0x1111111111111111111111111111111111111111";

/** A node as the sender sees it: counts what it was asked, keeps what it was sent. */
class FakeNode implements SenderRpc {
  pendingCount = 7;
  countReads = 0;
  feeEstimates = 0;
  /** Nonces of the transactions sent, in the order they arrived. */
  readonly sent: number[] = [];
  readonly known = new Set<Hex>();
  /** The next send fails with this message (and is not kept). */
  failNextSend?: string;
  /** As a node that cannot queue a transaction ahead of the next nonce (the devchain when automining). */
  refuseGaps = false;

  async estimateGas(args: { data: Hex }): Promise<bigint> {
    if (args.data === "0xdead") throw new Error("execution reverted");
    return 100_000n;
  }
  async estimateFeesPerGas() {
    this.feeEstimates++;
    return { maxFeePerGas: 2_000_000_000n, maxPriorityFeePerGas: 1_000_000n };
  }
  async getTransactionCount(): Promise<number> {
    this.countReads++;
    return this.pendingCount;
  }
  async sendRawTransaction({ serializedTransaction }: { serializedTransaction: Hex }): Promise<Hex> {
    const failure = this.failNextSend;
    this.failNextSend = undefined;
    if (failure) throw new Error(failure);
    const nonce = Number(parseTransaction(serializedTransaction).nonce);
    const expected = this.sent.length === 0 ? this.pendingCount : Math.max(...this.sent) + 1;
    if (this.refuseGaps && nonce > expected) throw new Error(`Nonce too high. Expected nonce to be ${expected} but got ${nonce}.`);
    const hash = keccak256(serializedTransaction);
    if (this.known.has(hash)) throw new Error("already known");
    this.known.add(hash);
    this.sent.push(Number(parseTransaction(serializedTransaction).nonce));
    return hash;
  }
  async getTransaction({ hash }: { hash: Hex }): Promise<unknown> {
    if (!this.known.has(hash)) throw new Error("transaction not found");
    return { hash };
  }
}

const nonceOf = (raw: Hex) => Number(parseTransaction(raw).nonce);

describe("TransactionSender", () => {
  let node: FakeNode;
  let sender: TransactionSender;
  const account = privateKeyToAccount(generatePrivateKey());

  beforeEach(() => {
    node = new FakeNode();
    sender = new TransactionSender({ rpc: node, account, chainId: 84532, sendOrderWaitMs: 200 });
  });

  it("signs before sending: the hash is the signed bytes' hash, the gas is the caller's, the chain id and key are its own", async () => {
    const signed = await sender.sign({ to: TO, data: "0x01", gas: 60_000n });
    expect(signed.txHash).toBe(keccak256(signed.raw));
    expect(parseTransaction(signed.raw)).toMatchObject({ chainId: 84532, to: TO, data: "0x01", gas: 60_000n, nonce: 7, type: "eip1559" });
    // Without a gas limit of its own, the call gets the node's estimate and 20% more.
    expect(parseTransaction((await sender.sign({ to: TO, data: "0x02" })).raw)).toMatchObject({ gas: 120_000n, nonce: 8 });
    expect(node.sent).toEqual([]);
    expect(sender.address).toBe(account.address);
  });

  it("hands out consecutive nonces under concurrency, reading the pending count once", async () => {
    const signed = await Promise.all(Array.from({ length: 10 }, (_, i) => sender.sign({ to: TO, data: `0x0${i}` })));
    expect(signed.map((s) => nonceOf(s.raw))).toEqual([7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
    expect(node.countReads).toBe(1);
    // One fee estimate serves the burst.
    expect(node.feeEstimates).toBe(1);
  });

  it("a failed preparation consumes no nonce", async () => {
    const first = await sender.sign({ to: TO, data: "0x01" });
    await expect(sender.sign({ to: TO, data: "0xdead" })).rejects.toThrow("execution reverted");
    const next = await sender.sign({ to: TO, data: "0x02" });
    expect([nonceOf(first.raw), nonceOf(next.raw)]).toEqual([7, 8]);
  });

  it("sends what it signed in nonce order, even when asked in reverse", async () => {
    const signed = [];
    for (let i = 0; i < 4; i++) signed.push(await sender.sign({ to: TO, data: `0x0${i}` }));
    await Promise.all([...signed].reverse().map((s) => sender.broadcast(s.raw)));
    expect(node.sent).toEqual([7, 8, 9, 10]);
  });

  it("a transaction signed but never sent holds the next one for sendOrderWaitMs at most", async () => {
    await sender.sign({ to: TO, data: "0x01" }); // its request "crashed": never broadcast
    const next = await sender.sign({ to: TO, data: "0x02" });
    const started = Date.now();
    await sender.broadcast(next.raw);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(node.sent).toEqual([8]);
  });

  it("sending the same transaction again is not an error", async () => {
    const signed = await sender.sign({ to: TO, data: "0x01" });
    await sender.broadcast(signed.raw);
    await sender.broadcast(signed.raw);
    expect(node.sent).toEqual([7]);
  });

  it("re-reads the pending count only after the node says the nonce is too low; any other failure keeps the nonce taken", async () => {
    const a = await sender.sign({ to: TO, data: "0x01" });
    node.failNextSend = "connection reset";
    await expect(sender.broadcast(a.raw)).rejects.toThrow("connection reset");
    expect(nonceOf((await sender.sign({ to: TO, data: "0x02" })).raw)).toBe(8);

    const b = await sender.sign({ to: TO, data: "0x03" });
    node.failNextSend = "nonce too low: next nonce 20, tx nonce 9";
    node.pendingCount = 20;
    // The transaction can never be mined: the caller is told so, with the node's words as the cause.
    await expect(sender.broadcast(b.raw)).rejects.toMatchObject({
      name: "NonceSpentError",
      nonce: 9,
      cause: expect.objectContaining({ message: expect.stringContaining("nonce too low") }),
    });
    expect(nonceOf((await sender.sign({ to: TO, data: "0x04" })).raw)).toBe(20);
    expect(node.countReads).toBe(2);
  });

  describe("signReserved: a nonce count shared by every process signing with the key", () => {
    /** The shared count as payments keeps it (a row under a lock), here in memory; `fails` makes the record step roll back. */
    function sharedCount() {
      let next: number | undefined;
      let lock = Promise.resolve();
      const reservations: { behind: boolean }[] = [];
      const reserve =
        (record: (nonce: number) => boolean = () => true): NonceReservation<{ nonce: number; raw: Hex } | undefined> =>
        async (key, sign) => {
          reservations.push({ behind: key.behind });
          const floor = next === undefined || key.behind ? await key.chainCount() : undefined;
          const turn = lock.then(async () => {
            if (floor !== undefined) next = Math.max(next ?? 0, floor);
            const nonce = next as number;
            const signed = await sign(nonce);
            if (!record(nonce)) return undefined;
            next = nonce + 1;
            return { nonce, raw: signed.raw };
          });
          lock = turn.then(
            () => undefined,
            () => undefined,
          );
          return turn;
        };
      return { reserve, reservations, next: () => next };
    }

    it("two senders on one key (two processes) sign distinct consecutive nonces, and what each signed goes out", async () => {
      const count = sharedCount();
      const other = new TransactionSender({ rpc: node, account, chainId: 84532, sendOrderWaitMs: 200 });
      const signed = await Promise.all(
        Array.from({ length: 12 }, (_, i) => (i % 2 ? sender : other).signReserved({ to: TO, data: `0x0${i % 10}` }, count.reserve())),
      );
      expect(signed.map((s) => s!.nonce).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => 7 + i));
      expect(count.next()).toBe(19);
    });

    it("a reservation that recorded nothing counts no nonce", async () => {
      const count = sharedCount();
      expect(
        await sender.signReserved(
          { to: TO, data: "0x01" },
          count.reserve(() => false),
        ),
      ).toBeUndefined();
      expect((await sender.signReserved({ to: TO, data: "0x02" }, count.reserve()))!.nonce).toBe(7);
    });

    it("a failed preparation reserves nothing", async () => {
      const count = sharedCount();
      await expect(sender.signReserved({ to: TO, data: "0xdead" }, count.reserve())).rejects.toThrow("execution reverted");
      expect(count.reservations).toEqual([]);
    });

    it("after the node says a nonce was too low, the next reservation says the count is behind, once", async () => {
      const count = sharedCount();
      const a = await sender.signReserved({ to: TO, data: "0x01" }, count.reserve());
      node.failNextSend = "nonce too low: next nonce 20, tx nonce 7";
      await expect(sender.broadcast(a!.raw)).rejects.toBeInstanceOf(NonceSpentError);
      node.pendingCount = 20;
      expect((await sender.signReserved({ to: TO, data: "0x02" }, count.reserve()))!.nonce).toBe(20);
      await sender.signReserved({ to: TO, data: "0x03" }, count.reserve());
      expect(count.reservations.map((r) => r.behind)).toEqual([false, true, false]);
    });

    it("a transaction the node finds ahead of another process's, not yet sent, is offered again until that one arrives", async () => {
      node.refuseGaps = true;
      const count = sharedCount();
      const other = new TransactionSender({ rpc: node, account, chainId: 84532, sendOrderWaitMs: 1_000 });
      const first = await other.signReserved({ to: TO, data: "0x01" }, count.reserve());
      const second = await sender.signReserved({ to: TO, data: "0x02" }, count.reserve());
      const sentSecond = sender.broadcast(second!.raw);
      await new Promise((r) => setTimeout(r, 100));
      await other.broadcast(first!.raw);
      await sentSecond;
      expect(node.sent).toEqual([7, 8]);
    });

    it("gives up on a gap that stays past sendOrderWaitMs (the sweep sends it later)", async () => {
      node.refuseGaps = true;
      const count = sharedCount();
      await sender.signReserved({ to: TO, data: "0x01" }, count.reserve()); // another process's, never sent
      const second = await sender.signReserved({ to: TO, data: "0x02" }, count.reserve());
      const started = Date.now();
      await expect(sender.broadcast(second!.raw)).rejects.toThrow("Nonce too high");
      expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    });
  });
});
