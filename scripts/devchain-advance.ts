/**
 * Moves the local devchain's clock forward and mines a block at the new time
 * (evm_increaseTime, evm_mine), so what waits on the chain's clock comes due:
 * a series' held periods, an escrow's timed exits. Devchain only; the moved
 * clock stays moved until the devchain restarts.
 *
 *   npm run -s devchain:advance -- <days>        # e.g. 30, or 0.5
 * The devchain URL comes from the running service's /health?deep=true
 * (C402_URL, default http://127.0.0.1:4020) or from DEVCHAIN_URL.
 */
async function devchainUrl(): Promise<string> {
  if (process.env.DEVCHAIN_URL) return process.env.DEVCHAIN_URL;
  const res = await fetch(`${process.env.C402_URL ?? "http://127.0.0.1:4020"}/health?deep=true`);
  const body = (await res.json()) as { devchain?: { url: string } };
  if (!body.devchain) throw new Error("the running service reports no devchain (is it in embedded mode?)");
  return body.devchain.url;
}

async function rpc(url: string, method: string, params: unknown[]) {
  const r = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await r.json()) as { result?: unknown; error?: unknown };
  if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

async function main() {
  const days = Number(process.argv[2]);
  if (!Number.isFinite(days) || days <= 0 || days > 3_650) throw new Error("usage: devchain:advance <days> (more than 0, at most 3650)");
  const url = await devchainUrl();
  await rpc(url, "evm_increaseTime", [Math.round(days * 86_400)]);
  await rpc(url, "evm_mine", []);
  const block = (await rpc(url, "eth_getBlockByNumber", ["latest", false])) as { timestamp: string };
  process.stdout.write(`the devchain's clock is now ${new Date(Number(BigInt(block.timestamp)) * 1000).toISOString()}\n`);
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : err}\n`);
  process.exit(1);
});
