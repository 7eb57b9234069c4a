import { writeFileSync } from "node:fs";
import { decodeHeader, encodeHeader, signEscrowDeposit, signExactEvmPayment, type PaymentRequirements } from "@c402/x402";
import { startFakeMcpServer, type FakeMcpServer } from "@c402/testkit/fake-mcp-server";
import { startFakeOrigin, type FakeOrigin } from "@c402/testkit/fake-origin";
import { startWebhookReceiver, type WebhookReceiver } from "@c402/testkit/webhook-receiver";
import { sep53Sign } from "@c402/testkit";
import { Keypair } from "@stellar/stellar-base";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { signedEscrowAction } from "../src/escrow";
import { signTypedJson, type TypedDataJson } from "../src/typed-data";
import { baseUrl } from "../src/http";
import { linksMailedTo } from "../src/mail";
import { createUsdcAccounts } from "../src/solana";
import { documentProblems, Fuzzer, send, type Doc, type Fixtures, type HttpResponse, type Scope } from "../src/openapi-fuzz";

/**
 * G22: the public REST API conforms to its OpenAPI document. The fuzzer
 * (src/openapi-fuzz.ts) reads the live /openapi.json, generates valid and
 * mutated requests for every operation with fast-check, and checks every
 * answer: no 5xx, a documented status, the documented content type and
 * schema, and a 4xx for anything certainly invalid. The setup itself (sign-up,
 * keys, checkouts, go-live, a rehearsal payment, receipts, facilitator) goes
 * through the same checks, so every operation's success answer is checked at
 * least once.
 *
 * C402_FUZZ_RUNS cases per operation and kind (default 25 here; `npm run fuzz`
 * runs 200), C402_FUZZ_SEED (default 22), C402_FUZZ_ONLY and C402_FUZZ_PATH
 * replay one failure, C402_FUZZ_REPORT writes every failure as JSON.
 */
const RUNS = Number(process.env.C402_FUZZ_RUNS ?? 25);
const SEED = Number(process.env.C402_FUZZ_SEED ?? 22);
const LONG = 30 * 60_000;

let fuzzer: Fuzzer;
let doc: Doc;
/** Answers the setup received, drifted on purpose by the self-test. */
const captured: Record<string, HttpResponse> = {};

const body = (v: unknown) => Buffer.from(JSON.stringify(v));
const auth = (secret: string) => ({ authorization: `Bearer ${secret}` });
const parsed = (r: HttpResponse) => JSON.parse(r.text);

function expectStatus(r: HttpResponse, status: number, what: string): void {
  if (r.status !== status) throw new Error(`setup: ${what} answered ${r.status}, not ${status}: ${r.text.slice(0, 500)}`);
}

/** The first way to pay of a face's unpaid 402 (its PAYMENT-REQUIRED header). */
const requirementOf = (unpaid: HttpResponse) => (decodeHeader(unpaid.headers["payment-required"] ?? "") as { accepts: PaymentRequirements[] }).accepts[0]!;
/** A payment of `requirement` signed by a fresh wallet, as PAYMENT-SIGNATURE carries it (the faces paid here settle simulated: nothing moves). */
/** Operations this deployment documents but never completes: a relayed ruling is for Solana escrows, and no Solana escrow rail runs here (ADR 19). */
const NEVER_SUCCEEDS_HERE = ["POST /v1/escrows/{payment_id}/resolve/submit"];

const paymentFor = async (requirement: PaymentRequirements) => encodeHeader(await signExactEvmPayment(privateKeyToAccount(generatePrivateKey()), requirement));

/** A wallet's sign-in through the checked path: an EVM account signs with personal_sign, a Stellar keypair with SEP-53 (hex). */
async function signIn(wallet: PrivateKeyAccount | Keypair): Promise<HttpResponse> {
  const stellar = wallet instanceof Keypair;
  const challenge = await fuzzer.scripted("POST /auth/wallet/challenge", {
    path: "/auth/wallet/challenge",
    body: body(stellar ? { address: wallet.publicKey(), network: "stellar:pubnet" } : { address: wallet.address, network: "eip155:8453" }),
  });
  expectStatus(challenge, 200, "wallet challenge");
  const message = parsed(challenge).message as string;
  return fuzzer.scripted("POST /auth/wallet/verify", {
    path: "/auth/wallet/verify",
    body: body({ message, signature: stellar ? sep53Sign(wallet, message).toString("hex") : await wallet.signMessage({ message }) }),
  });
}

/**
 * One seller with keys of each scope (and a live key when the service mints
 * one), sacrificial keys for DELETE, a revoked key, checkouts (single-shot,
 * reusable with an offer card, armed), another seller's checkout, a rehearsal
 * payment with a handoff nonce (simulated: no funds move), its receipt;
 * gated articles bought on both faces, and the pass the purchase answered.
 */
/** The fake MCP server setUp starts (closed after the suite). */
let mcpServer: FakeMcpServer | undefined;
/** The relay origin of the package checkout setUp buys from (closed after the suite). */
let packageOrigin: FakeOrigin | undefined;
/** The webhook receiver the kept receiver posts to (closed after the suite). */
let webhookReceiver: WebhookReceiver | undefined;

async function setUp(): Promise<Fixtures> {
  const scripted = fuzzer.scripted.bind(fuzzer);
  for (const op of fuzzer.ops.filter((o) => o.method === "GET" && !o.template.includes("{"))) await scripted(op.id, { path: op.template });
  await scripted("GET /health", { path: "/health?deep=true" });
  captured.facilitatorHealth = await scripted("GET /health/facilitator", { path: "/health/facilitator?ignored=1" });
  expectStatus(captured.facilitatorHealth, 200, "facilitator health");
  // The fee calculator: one valid quote, and invalid ones (422 naming the field).
  captured.quote = await scripted("GET /v1/platform/quote", { path: "/v1/platform/quote?price_usd=0.10&platform_fee_bps=250" });
  expectStatus(captured.quote, 200, "platform quote");
  for (const query of ["price_usd=0.10&platform_fee_bps=2001", "price_usd=0.10&platform_fee_bps=1.5", "platform_fee_bps=10", "price_usd=1&price_usd=1"])
    expectStatus(await scripted("GET /v1/platform/quote", { path: `/v1/platform/quote?${query}` }), 422, `platform quote ?${query}`);

  const wallet = privateKeyToAccount(generatePrivateKey());
  const signUp = await signIn(wallet);
  expectStatus(signUp, 201, "first wallet sign-in");
  const full = parsed(signUp).api_key.secret as string;
  const later = await signIn(wallet); // a later sign-in: 200 with a session, checked against the document
  expectStatus(later, 200, "a later sign-in");
  expectStatus(await scripted("POST /auth/logout", { path: "/auth/logout", headers: auth(parsed(later).session.token) }), 200, "logout");
  // A Stellar account's sign-in (the answer names the stellar payout wallet), and its wallets as the document says.
  const stellarSignUp = await signIn(Keypair.random());
  expectStatus(stellarSignUp, 201, "a Stellar wallet's sign-in");
  const stellarKey = parsed(stellarSignUp).api_key.secret as string;
  expectStatus(await scripted("GET /v1/account/wallets", { path: "/v1/account/wallets", headers: auth(stellarKey) }), 200, "a Stellar seller's wallets");

  // Magic-link sign-in: two links read from the mail the service wrote; one followed (303 with the cookie), one posted (200).
  const email = `fuzz-${SEED}-${Date.now().toString(36)}@example.com`;
  const linkToken = async (returnTo?: string) => {
    const r = await scripted("POST /auth/magic-link/request", {
      path: "/auth/magic-link/request",
      body: body({ email, ...(returnTo ? { return_to: returnTo } : {}) }),
    });
    expectStatus(r, 200, "magic-link request");
    const token = new URL((await linksMailedTo(email)).at(-1) ?? "http://x/").searchParams.get("token");
    if (!token) throw new Error("setup: no sign-in link was mailed");
    return token;
  };
  expectStatus(await scripted("GET /auth/verify", { path: `/auth/verify?token=${await linkToken("/auth/me")}` }), 303, "following a sign-in link");
  const linkSignIn = await scripted("POST /auth/verify", { path: "/auth/verify", body: body({ token: await linkToken() }) });
  expectStatus(linkSignIn, 200, "verifying a sign-in link");
  expectStatus(
    await scripted("POST /auth/session/cookie", { path: "/auth/session/cookie", headers: auth(parsed(linkSignIn).session.token) }),
    200,
    "session cookie",
  );

  // A spending wallet through its session-only doors (a key is 403 there), then an agent key's pay of a URL that asks for nothing.
  const session = auth(parsed(linkSignIn).session.token);
  const spending = async (opId: string, path: string, status: number, extra: { body?: Buffer; headers?: Record<string, string> } = {}) => {
    const r = await scripted(opId, { path, headers: { ...session, ...extra.headers }, ...(extra.body ? { body: extra.body } : {}) });
    expectStatus(r, status, opId);
    return r;
  };
  await spending("POST /v1/spending-wallets/{chain}", "/v1/spending-wallets/base", 201);
  await spending("PUT /v1/spending-wallets/{chain}/limits", "/v1/spending-wallets/base/limits", 200, {
    body: body({ per_payment_usd: "1.00", per_day_usd: "10.00" }),
  });
  await spending("GET /v1/spending-wallets/{chain}/funding", "/v1/spending-wallets/base/funding?amount=5", 200);
  await spending("GET /v1/spending-wallets/{chain}/funding.svg", "/v1/spending-wallets/base/funding.svg?amount=5", 200, {
    headers: { accept: "image/svg+xml" },
  });
  await spending("GET /v1/spending-wallets/{chain}/balance", "/v1/spending-wallets/base/balance", 200);
  const agent = parsed(await spending("POST /v1/spending-wallets/keys", "/v1/spending-wallets/keys", 201, { body: body({ name: "agent" }) })).secret as string;
  expectStatus(
    await scripted("POST /v1/spending-wallets/{chain}/pay", {
      path: "/v1/spending-wallets/base/pay",
      headers: auth(agent),
      body: body({ url: `${process.env.E2E_BASE_URL}/health` }),
    }),
    200,
    "an agent's pay of a URL that asks for no payment",
  );
  await spending("GET /v1/spending-wallets/{chain}/events", "/v1/spending-wallets/base/events", 200);
  await spending("POST /v1/spending-wallets/{chain}/reveal", "/v1/spending-wallets/base/reveal", 200);
  await spending("DELETE /v1/spending-wallets/{chain}", "/v1/spending-wallets/base", 200);

  const newKey = async (spec: Record<string, unknown>) => {
    const r = await scripted("POST /v1/keys", { path: "/v1/keys", headers: auth(full), body: body(spec) });
    return r.status === 201 ? (parsed(r) as { id: string; secret: string }) : undefined;
  };
  const keys: Fixtures["keys"] = [{ scope: "full", secret: full, mode: "test" }];
  for (const scope of ["read_only", "payments", "full"] as Scope[]) {
    const k = await newKey({ scope, name: `fuzz ${scope}` });
    if (!k) throw new Error(`setup: could not create a ${scope} key`);
    keys.push({ scope, secret: k.secret, mode: "test" });
  }
  const live = await newKey({ scope: "full", mode: "live", name: "fuzz live" });
  if (live) keys.push({ scope: "full", secret: live.secret, mode: "live" });
  const sacrificial: string[] = [];
  for (let i = 0; i < 4; i++) {
    const k = await newKey({ scope: "read_only", name: `fuzz sacrificial ${i}` });
    if (k) sacrificial.push(k.id);
  }
  const revoked = await newKey({ scope: "full", name: "fuzz revoked" });
  if (revoked)
    expectStatus(await scripted("DELETE /v1/keys/{key_id}", { path: `/v1/keys/${revoked.id}`, headers: auth(revoked.secret) }), 204, "self-revocation");
  const payments = keys.find((k) => k.scope === "payments")!.secret;
  const readOnly = keys.find((k) => k.scope === "read_only")!.secret;

  const cursors: string[] = [];
  const keyPage = await scripted("GET /v1/keys", { path: "/v1/keys?limit=1", headers: auth(readOnly) });
  if (keyPage.status === 200 && parsed(keyPage).next_cursor) cursors.push(parsed(keyPage).next_cursor);
  captured.keys = await scripted("GET /v1/keys", { path: "/v1/keys", headers: auth(full) });

  const create = async (key: string, spec: Record<string, unknown>, headers: Record<string, string> = {}) => {
    const r = await scripted("POST /v1/checkouts", { path: "/v1/checkouts", headers: { ...auth(key), ...headers }, body: body(spec) });
    expectStatus(r, 201, "checkout create");
    return parsed(r).id as string;
  };
  const single = await create(payments, { title: "Weather for Paris", price_usd: "0.10", payload: { temp_c: 21 } });
  const reusable = await create(
    full,
    {
      title: "Tide tables",
      price_usd: "0.25",
      description: "Next 7 days",
      payload: ["high 06:12", "low 12:30"],
      reusable: true,
      expires_in_minutes: 600,
      input_schema: { type: "object" },
      output_schema: { type: "array" },
      example_input: { port: "Brest" },
      example_output: ["high 06:12"],
      freshness: "daily",
      coverage: "France",
      source: "SHOM",
      constraints: "none",
    },
    { "idempotency-key": `fuzz-${SEED}-${Date.now()}` },
  );
  const armed = await create(payments, { title: "Armed", price_usd: "1.00", payload: "text goods" });
  await scripted("POST /v1/checkouts/{id}/go-live", { path: `/v1/checkouts/${armed}/go-live`, headers: auth(payments) });
  await scripted("POST /v1/checkouts/{id}/go-live", { path: `/v1/checkouts/${armed}/go-live`, headers: auth(payments) }); // already live
  // A Solana payout rail (its USDC account created first): its live face lists a Solana requirement too (a base58 payTo, extra.feePayer), which the document must accept.
  await createUsdcAccounts("9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM");
  expectStatus(
    await scripted("POST /v1/checkouts/{id}/payouts", {
      path: `/v1/checkouts/${armed}/payouts`,
      headers: auth(payments),
      body: body({ chain: "solana", address: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM" }),
    }),
    200,
    "solana rail",
  );
  const solanaQuote = await scripted("GET /c/{id}", { path: `/c/${armed}` });
  expectStatus(solanaQuote, 402, "live face with a Solana rail");
  expect(parsed(solanaQuote).accepts.map((a: { network: string }) => a.network)).toContain("solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1");
  // Its rehearsal face lists a Solana rehearsal requirement (the rehearsal fee payer), which the rehearsal schema must accept.
  const solanaRehearsal = await scripted("GET /c/{id}/test", { path: `/c/${armed}/test` });
  expectStatus(solanaRehearsal, 402, "rehearsal face with a Solana rail");
  expect(parsed(solanaRehearsal).accepts.map((a: { network: string }) => a.network)).toContain("solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1");

  const page = await scripted("GET /v1/checkouts", { path: "/v1/checkouts?limit=1", headers: auth(readOnly) });
  captured.checkouts = page;
  if (page.status === 200 && parsed(page).next_cursor) cursors.push(parsed(page).next_cursor);
  await scripted("GET /v1/checkouts", { path: "/v1/checkouts?include_voided=true", headers: auth(readOnly) });
  await scripted("GET /v1/checkouts/{id}", { path: `/v1/checkouts/${reusable}`, headers: auth(readOnly) });
  // A checkout's life: patch (and an immutable field refused), void twice, restore twice, extend (refused while void).
  const lived = await create(payments, { title: "Lifecycle", price_usd: "0.20", payload: { n: 1 }, reusable: true });
  const livedPath = `/v1/checkouts/${lived}`;
  expectStatus(
    await scripted("PATCH /v1/checkouts/{id}", {
      path: livedPath,
      headers: auth(payments),
      body: body({ title: "Lifecycle 2", coverage: null, input_schema: { type: "object" } }),
    }),
    200,
    "patch",
  );
  expectStatus(await scripted("PATCH /v1/checkouts/{id}", { path: livedPath, headers: auth(payments), body: body({ price_usd: "1.00" }) }), 422, "patch price");
  expectStatus(await scripted("DELETE /v1/checkouts/{id}", { path: livedPath, headers: auth(payments) }), 200, "void");
  await scripted("DELETE /v1/checkouts/{id}", { path: livedPath, headers: auth(payments) });
  expectStatus(
    await scripted("POST /v1/checkouts/{id}/extend", { path: `${livedPath}/extend`, headers: auth(payments), body: body({ expires_in_minutes: 30 }) }),
    409,
    "extend void",
  );
  expectStatus(await scripted("POST /v1/checkouts/{id}/restore", { path: `${livedPath}/restore`, headers: auth(payments) }), 200, "restore");
  await scripted("POST /v1/checkouts/{id}/restore", { path: `${livedPath}/restore`, headers: auth(payments) });
  expectStatus(
    await scripted("POST /v1/checkouts/{id}/extend", { path: `${livedPath}/extend`, headers: auth(payments), body: body({ expires_in_minutes: null }) }),
    200,
    "extend",
  );
  expectStatus(
    await scripted("POST /v1/checkouts/{id}/extend", { path: `${livedPath}/extend`, headers: auth(payments), body: body({}) }),
    422,
    "extend without a deadline",
  );
  const events = await scripted("GET /v1/account/events", { path: "/v1/account/events?limit=2", headers: auth(readOnly) });
  expectStatus(events, 200, "account events");
  if (parsed(events).next_before) {
    await scripted("GET /v1/account/events", { path: `/v1/account/events?action=key.&before=${parsed(events).next_before}`, headers: auth(readOnly) });
  }
  expectStatus(await scripted("GET /v1/account/events", { path: "/v1/account/events?before=yesterday", headers: auth(readOnly) }), 422, "events cursor");

  const other = await signIn(privateKeyToAccount(generatePrivateKey()));
  expectStatus(other, 201, "another seller's sign-in");
  const foreign = await create(parsed(other).api_key.secret, { title: "Someone else's", price_usd: "0.50" });

  // Platform mode: read, set, refused (a fee without a fee wallet), then back to an ordinary seller.
  expectStatus(await scripted("GET /v1/account/platform", { path: "/v1/account/platform", headers: auth(readOnly) }), 200, "platform settings");
  const platformOn = { platform_account: true, platform_fee_bps: 250, platform_fee_to: privateKeyToAccount(generatePrivateKey()).address };
  expectStatus(await scripted("PUT /v1/account/platform", { path: "/v1/account/platform", headers: auth(full), body: body(platformOn) }), 200, "platform on");
  const noWallet = { platform_account: true, platform_fee_bps: 250 };
  expectStatus(
    await scripted("PUT /v1/account/platform", { path: "/v1/account/platform", headers: auth(full), body: body(noWallet) }),
    422,
    "platform fee without a wallet",
  );
  const platformOff = { platform_account: false, platform_fee_bps: 0 };
  expectStatus(await scripted("PUT /v1/account/platform", { path: "/v1/account/platform", headers: auth(full), body: body(platformOff) }), 200, "platform off");

  // Escrow settings: read, changed (an arbiter: its readiness answered), refused, the payout wallets copied, the readiness read.
  expectStatus(await scripted("GET /v1/account/escrow", { path: "/v1/account/escrow", headers: auth(readOnly) }), 200, "escrow settings");
  // seller_choice: the setup's plain creates stay plain (always would make each an escrow one).
  const escrowArbiter = privateKeyToAccount(generatePrivateKey()).address;
  const escrowChange = { escrow_policy: "seller_choice", escrow_default_preset: "shipping", escrow_arbiter_evm: escrowArbiter };
  expectStatus(
    await scripted("PUT /v1/account/escrow", { path: "/v1/account/escrow", headers: auth(full), body: body(escrowChange) }),
    200,
    "escrow settings change",
  );
  expectStatus(
    await scripted("PUT /v1/account/escrow", { path: "/v1/account/escrow", headers: auth(full), body: body({ escrow_arbiter_svm: "0xnot-solana" }) }),
    422,
    "an arbiter of the wrong family",
  );
  expectStatus(
    await scripted("PUT /v1/account/escrow", { path: "/v1/account/escrow", headers: auth(full), body: body({ arbiter: "payouts" }) }),
    200,
    "payouts as arbiters",
  );
  expectStatus(await scripted("GET /v1/account/escrow/readiness", { path: "/v1/account/escrow/readiness", headers: auth(readOnly) }), 200, "escrow readiness");

  // The seller profile: read, changed, refused (422), and a slug the other seller holds (409).
  const slug = `fuzz-${SEED}-${Date.now().toString(36)}`;
  expectStatus(await scripted("GET /auth/me", { path: "/auth/me", headers: auth(readOnly) }), 200, "profile");
  const profileChange = { name: "Fuzz seller", profile_type: "team", website_url: "https://fuzz.example", social_links: { github: "https://github.com/fuzz" } };
  expectStatus(await scripted("PATCH /auth/me", { path: "/auth/me", headers: auth(full), body: body(profileChange) }), 200, "profile change");
  expectStatus(await scripted("PATCH /auth/me", { path: "/auth/me", headers: auth(full), body: body({ slug: "Not A Slug" }) }), 422, "profile slug");
  const otherProfile = { slug, bio: "" };
  expectStatus(
    await scripted("PATCH /auth/me", { path: "/auth/me", headers: auth(parsed(other).api_key.secret), body: body(otherProfile) }),
    200,
    "other profile",
  );
  expectStatus(await scripted("PATCH /auth/me", { path: "/auth/me", headers: auth(full), body: body({ slug }) }), 409, "taken slug");
  // The seller's public catalogue (its armed checkout is on sale), in each form; the other seller's lists nothing on sale.
  const ownSlug = `${slug}-own`;
  expectStatus(await scripted("PATCH /auth/me", { path: "/auth/me", headers: auth(full), body: body({ slug: ownSlug }) }), 200, "own slug");
  for (const op of ["GET /v1/sellers/{slug}/offers", "GET /v1/sellers/{slug}/embed", "GET /schedule/{slug}", "GET /u/{slug}"]) {
    const path = op.slice(4).replace("{slug}", ownSlug);
    expectStatus(await scripted(op, { path }), 200, op);
    expectStatus(await scripted(op, { path: `${path}?limit=1` }), 200, `${op} ?limit=1`);
    expectStatus(await scripted(op, { path: path.replace(ownSlug, slug) }), 200, `${op} of a seller with nothing on sale`);
    expectStatus(await scripted(op, { path: path.replace(ownSlug, "nobody-has-this-slug") }), 404, `${op} of a slug nobody holds`);
  }
  expectStatus(await scripted("GET /schedule/{slug}", { path: "/schedule/sch_000000000000000000000000" }), 404, "a series nobody bought (the buyer view)");

  for (const id of [single, reusable, armed, foreign]) {
    for (const face of ["", "/test"]) {
      const op = `GET /c/{id}${face}`;
      await scripted(op, { path: `/c/${id}${face}` });
      await scripted(op, { path: `/c/${id}${face}?x402_version=1` });
      await scripted(op, { path: `/c/${id}${face}`, headers: { accept: "text/html" } });
    }
  }
  for (const face of ["", "/test"])
    await scripted(`POST /c/{id}${face}/prepare`, { path: `/c/${single}${face}/prepare`, body: body({ payer: wallet.address }) });

  // A rehearsal payment: simulated settlement, nothing moves on-chain.
  const unpaid = await scripted("GET /c/{id}/test", { path: `/c/${reusable}/test` });
  captured.rehearsal = unpaid;
  const payment = await paymentFor(requirementOf(unpaid));
  const nonce = `fuzz${SEED}handoff${Date.now()}`.slice(0, 40);
  const paid = await scripted("GET /c/{id}/test", { path: `/c/${reusable}/test?h=${nonce}`, headers: { "payment-signature": payment } });
  expectStatus(paid, 200, "rehearsal payment");
  captured.paid = paid;
  await scripted("GET /c/{id}/test", { path: `/c/${reusable}/test`, headers: { "x-payment": payment } }); // redelivery
  // The live face of a checkout that has not gone live settles simulated too.
  const liveUnpaid = await scripted("GET /c/{id}", { path: `/c/${reusable}` });
  const liveRequirement = requirementOf(liveUnpaid);
  if (liveRequirement.extra.rehearsal !== true) throw new Error("setup: the live face of an unarmed checkout must settle simulated");
  const livePayment = await paymentFor(liveRequirement);
  expectStatus(
    await scripted("GET /c/{id}", { path: `/c/${reusable}`, headers: { "payment-signature": livePayment } }),
    200,
    "simulated payment on the unarmed live face",
  );
  // The POST twins: the same payments presented again (redelivered), and the unpaid 402.
  for (const [op, face, header] of [
    ["POST /c/{id}/test/pay", "/test", payment],
    ["POST /c/{id}/pay", "", livePayment],
  ] as const) {
    expectStatus(await scripted(op, { path: `/c/${reusable}${face}/pay`, headers: { "payment-signature": header } }), 200, `${op} paid`);
    await scripted(op, { path: `/c/${reusable}${face}/pay`, headers: { "x-payment": header }, body: body({}) });
    await scripted(op, { path: `/c/${single}${face}/pay` });
  }
  const receipt = parsed(paid).receipt as { id: string; tx_hash: string };
  await scripted("GET /r/{payment_id}", { path: `/r/${receipt.id}` });
  await scripted("GET /r/{payment_id}", { path: `/r/${receipt.id}`, headers: { accept: "text/html" } });
  await scripted("GET /r/{payment_id}/download", { path: `/r/${receipt.id}/download` });
  await scripted("GET /r/by-tx/{tx_hash}", { path: `/r/by-tx/${receipt.tx_hash}` });
  await scripted("GET /c/{id}/handoff/{nonce}", { path: `/c/${reusable}/handoff/${nonce}` });

  // Reports: filed with no credential (anonymous, and a buyer report naming the receipt), refused (422), listed
  // (another seller's checkout is 404), acknowledged, resolved (a note is required), then 409.
  const reportsOf = (id: string) => `/v1/checkouts/${id}/reports`;
  const fileReport = (id: string, spec: Record<string, unknown>) => scripted("POST /v1/checkouts/{id}/reports", { path: reportsOf(id), body: body(spec) });
  const anonymousReport = await fileReport(reusable, { category: "stale_data", detail: "Yesterday's tides." });
  expectStatus(anonymousReport, 201, "anonymous report");
  const buyerReport = await fileReport(reusable, { category: "not_delivered", receipt_id: receipt.id });
  expectStatus(buyerReport, 201, "buyer report");
  expectStatus(await fileReport(single, { category: "other", receipt_id: receipt.id }), 422, "a report naming another checkout's receipt");
  expectStatus(await fileReport(reusable, { category: "refund_please" }), 422, "a report outside the categories");
  expectStatus(await scripted("GET /v1/checkouts/{id}/reports", { path: reportsOf(reusable), headers: auth(readOnly) }), 200, "a checkout's reports");
  expectStatus(await scripted("GET /v1/checkouts/{id}/reports", { path: reportsOf(foreign), headers: auth(readOnly) }), 404, "another seller's reports");
  captured.reports = await scripted("GET /v1/reports", { path: "/v1/reports?limit=1", headers: auth(readOnly) });
  expectStatus(captured.reports, 200, "reports");
  if (parsed(captured.reports).next_cursor) cursors.push(parsed(captured.reports).next_cursor);
  expectStatus(await scripted("GET /v1/reports", { path: "/v1/reports?limit=0", headers: auth(readOnly) }), 422, "reports page size");
  const reportPath = `/v1/reports/${parsed(buyerReport).id}`;
  const patchReport = (key: string, spec: Record<string, unknown>) =>
    scripted("PATCH /v1/reports/{report_id}", { path: reportPath, headers: auth(key), body: body(spec) });
  expectStatus(await patchReport(readOnly, { status: "acknowledged" }), 403, "report change with a read_only key");
  expectStatus(await patchReport(payments, { status: "acknowledged", note: "Looking into it." }), 200, "report acknowledged");
  expectStatus(await patchReport(payments, { status: "resolved" }), 422, "report resolved without a note");
  expectStatus(await patchReport(payments, { status: "resolved", note: "Redelivered." }), 200, "report resolved");
  expectStatus(await patchReport(payments, { status: "acknowledged" }), 409, "a resolved report acknowledged");

  // Origin keys: stored (201; a bad body 422), listed, rotated, revoked (twice: the second changes nothing); the kept one is the fuzz's {secret_id}.
  const createOriginKey = (spec: Record<string, unknown>) =>
    scripted("POST /v1/origin-keys", { path: "/v1/origin-keys", headers: auth(payments), body: body(spec) });
  const keptOriginKey = await createOriginKey({ auth_type: "bearer", value: "conformance-origin-secret" });
  expectStatus(keptOriginKey, 201, "origin key");
  const doomedOriginKey = await createOriginKey({ auth_type: "api_key", header_name: "X-Api-Key", value: "doomed-origin-secret" });
  expectStatus(doomedOriginKey, 201, "origin key to revoke");
  expectStatus(await createOriginKey({ auth_type: "api_key", value: "no header" }), 422, "api_key origin key without header_name");
  expectStatus(await scripted("GET /v1/origin-keys", { path: "/v1/origin-keys", headers: auth(readOnly) }), 200, "origin keys");
  const originKeyPath = (r: Awaited<ReturnType<typeof scripted>>) => `/v1/origin-keys/${parsed(r).id}`;
  expectStatus(
    await scripted("PATCH /v1/origin-keys/{secret_id}", {
      path: originKeyPath(keptOriginKey),
      headers: auth(payments),
      body: body({ value: "rotated-secret" }),
    }),
    200,
    "origin key rotated",
  );
  for (const attempt of ["origin key revoked", "origin key revoked again"]) {
    expectStatus(await scripted("DELETE /v1/origin-keys/{secret_id}", { path: originKeyPath(doomedOriginKey), headers: auth(payments) }), 200, attempt);
  }
  // A seller's MCP server on loopback (the running service may call loopback here), asked for its tools with the stored key.
  mcpServer = await startFakeMcpServer({ tools: [{ name: "forecast", inputSchema: { type: "object" } }] });
  expectStatus(
    await scripted("POST /v1/mcp/tools", {
      path: "/v1/mcp/tools",
      headers: auth(payments),
      body: body({ origin_url: mcpServer.url, origin_auth_secret_id: parsed(keptOriginKey).id }),
    }),
    200,
    "an MCP server's tools",
  );

  // Webhooks: a receiver registered (201), re-keyed by registering its url again (201), a bad url refused (422),
  // listed; another deleted (then 404). The kept one receives the webhook sale below: its delivery is the fuzz's {delivery_id}.
  webhookReceiver = await startWebhookReceiver();
  const registerWebhook = (spec: Record<string, unknown>) => scripted("POST /v1/webhooks", { path: "/v1/webhooks", headers: auth(full), body: body(spec) });
  const keptWebhook = await registerWebhook({ url: `${webhookReceiver.url}/kept`, events: ["checkout.paid", "checkout.reported"] });
  expectStatus(keptWebhook, 201, "a webhook receiver");
  expectStatus(await registerWebhook({ url: `${webhookReceiver.url}/kept`, events: ["checkout.paid", "checkout.reported"] }), 201, "a receiver re-keyed");
  expectStatus(await registerWebhook({ url: "ftp://example.com/hook" }), 422, "a receiver url that is not https");
  const doomedWebhook = await registerWebhook({ url: `${webhookReceiver.url}/doomed`, events: null });
  expectStatus(doomedWebhook, 201, "a receiver to delete");
  captured.webhooks = await scripted("GET /v1/webhooks", { path: "/v1/webhooks?limit=1", headers: auth(readOnly) });
  expectStatus(captured.webhooks, 200, "receivers");
  if (parsed(captured.webhooks).next_cursor) cursors.push(parsed(captured.webhooks).next_cursor);
  const doomedWebhookPath = `/v1/webhooks/${parsed(doomedWebhook).id}`;
  expectStatus(await scripted("DELETE /v1/webhooks/{id}", { path: doomedWebhookPath, headers: auth(full) }), 200, "a receiver deleted");
  expectStatus(await scripted("DELETE /v1/webhooks/{id}", { path: doomedWebhookPath, headers: auth(full) }), 404, "a receiver deleted again");
  const keptWebhookPath = `/v1/webhooks/${parsed(keptWebhook).id}`;

  // A webhook sale (rehearsal): it awaits fulfilment until the seller closes it out (twice: the second changes nothing);
  // an inline sale has nothing to close out (409).
  const webhookCheckout = await create(full, { title: "Made to order", price_usd: "0.20", fulfillment: "webhook", reusable: true });
  const webhookQuote = await scripted("GET /c/{id}/test", { path: `/c/${webhookCheckout}/test` });
  const webhookSale = await scripted("GET /c/{id}/test", {
    path: `/c/${webhookCheckout}/test`,
    headers: { "payment-signature": await paymentFor(requirementOf(webhookQuote)) },
  });
  expectStatus(webhookSale, 200, "a webhook sale");
  // Its checkout.paid reaches the kept receiver (at least once); the delivery and its attempts are readable.
  await webhookReceiver.waitFor(1, 30_000);
  const deliveries = await scripted("GET /v1/webhooks/{id}/deliveries", { path: `${keptWebhookPath}/deliveries`, headers: auth(readOnly) });
  expectStatus(deliveries, 200, "a receiver's deliveries");
  const deliveryId = parsed(deliveries).deliveries[0]?.id as string;
  expectStatus(
    await scripted("GET /v1/webhooks/{id}/deliveries/{delivery_id}", { path: `${keptWebhookPath}/deliveries/${deliveryId}`, headers: auth(readOnly) }),
    200,
    "a delivery",
  );
  expectStatus(
    await scripted("GET /v1/webhooks/{id}/deliveries", { path: `${keptWebhookPath}/deliveries?status=late`, headers: auth(readOnly) }),
    422,
    "a delivery status outside the set",
  );
  const awaiting = await scripted("GET /v1/receipts/awaiting-fulfilment", { path: "/v1/receipts/awaiting-fulfilment?limit=1", headers: auth(readOnly) });
  expectStatus(awaiting, 200, "sales awaiting fulfilment");
  if (parsed(awaiting).next_cursor) cursors.push(parsed(awaiting).next_cursor);
  // The ledger: a page, the CSV export, one receipt of the account.
  expectStatus(await scripted("GET /v1/receipts", { path: "/v1/receipts?test_mode=true&limit=1", headers: auth(readOnly) }), 200, "the ledger");
  expectStatus(await scripted("GET /v1/receipts/export", { path: "/v1/receipts/export?test_mode=true", headers: auth(readOnly) }), 200, "the export");
  expectStatus(await scripted("GET /v1/receipts/{payment_id}", { path: `/v1/receipts/${receipt.id}`, headers: auth(readOnly) }), 200, "one receipt");
  expectStatus(await scripted("GET /v1/receipts", { path: "/v1/receipts?from=2026-12-01&to=2026-11-01", headers: auth(readOnly) }), 422, "a range backwards");
  expectStatus(await scripted("GET /v1/analytics", { path: "/v1/analytics?days=7&test_mode=true", headers: auth(readOnly) }), 200, "analytics");
  const fulfilledPath = (id: string) => `/v1/receipts/${id}/fulfilled`;
  for (const attempt of ["marked fulfilled", "marked fulfilled again"]) {
    expectStatus(
      await scripted("POST /v1/receipts/{payment_id}/fulfilled", { path: fulfilledPath(parsed(webhookSale).receipt.id), headers: auth(payments) }),
      200,
      attempt,
    );
  }
  expectStatus(
    await scripted("POST /v1/receipts/{payment_id}/fulfilled", { path: fulfilledPath(receipt.id), headers: auth(payments) }),
    409,
    "an inline sale marked fulfilled",
  );

  // A package of calls (rehearsal) on a loopback origin: bought, one call spent with its key, the usage record read.
  packageOrigin = await startFakeOrigin();
  const packageCheckout = await create(full, {
    title: "Package of calls",
    price_usd: "1.00",
    origin_url: `${packageOrigin.url}/echo`,
    max_deliveries: 5,
    reusable: true,
  });
  const packageQuote = await scripted("GET /c/{id}/test", { path: `/c/${packageCheckout}/test` });
  const packageSale = await scripted("GET /c/{id}/test", {
    path: `/c/${packageCheckout}/test?city=Oslo`,
    headers: { "payment-signature": await paymentFor(requirementOf(packageQuote)) },
  });
  expectStatus(packageSale, 200, "a package purchase");
  const packageKey = { authorization: `Bearer ${parsed(packageSale).package_key as string}` };
  expectStatus(await scripted("GET /c/{id}", { path: `/c/${packageCheckout}?city=Rome`, headers: packageKey }), 200, "a package call");
  expectStatus(await scripted("GET /c/{id}/usage", { path: `/c/${packageCheckout}/usage?limit=1`, headers: packageKey }), 200, "a package's usage");
  expectStatus(await scripted("GET /c/{id}/usage", { path: `/c/${packageCheckout}/usage?limit=0`, headers: packageKey }), 422, "a usage page of 0");
  // Its call URLs under the seller's handle: served as its faces.
  for (const face of ["", "/test"]) {
    const op = `GET /r/{slug}/{id}${face}`;
    expectStatus(await scripted(op, { path: `/r/${ownSlug}/${packageCheckout}${face}?q=1`, headers: packageKey }), 200, `a package call at ${op}`);
    expectStatus(await scripted(op, { path: `/r/${ownSlug}/${packageCheckout}${face}` }), 402, `the 402 at ${op}`);
    expectStatus(await scripted(op, { path: `/r/${slug}/${packageCheckout}${face}` }), 404, `another seller's handle at ${op}`);
  }

  // Gated content: articles (cnt_, faces under /x/) of the reusable kind, left unarmed so both faces settle simulated.
  const articleSpec = { price_usd: "0.25", reusable: true, content: { author: "A. Writer", published: "2026-11-01", keywords: ["mystery"] } };
  const article = await create(payments, { ...articleSpec, title: "The manor mystery", payload: "<p>A dark and stormy night.</p><p>The butler did it.</p>" });
  const jsonArticle = await create(payments, { ...articleSpec, title: "Tide data", payload: { port: "Brest", high: "06:12" }, content: {} });
  expectStatus(await scripted("GET /v1/checkouts/{id}", { path: `/v1/checkouts/${article}`, headers: auth(readOnly) }), 200, "an article as a checkout");
  expectStatus(
    await scripted("PATCH /v1/checkouts/{id}", {
      path: `/v1/checkouts/${article}`,
      headers: auth(payments),
      body: body({ payload: "<p>A dark and stormy night.</p><p>The gardener did it.</p>", content: { ...articleSpec.content, pass_hours: 48 } }),
    }),
    200,
    "an article's body and declaration changed",
  );
  expectStatus(
    await scripted("POST /v1/checkouts", {
      path: "/v1/checkouts",
      headers: auth(payments),
      body: body({ title: "Held article", price_usd: "0.10", payload: "text", content: {}, escrow_offer: "optional" }),
    }),
    400,
    "escrow with content",
  );
  // Escrow checkouts (the account's arbiters are its own payout wallets now, so the create names one): created, refused, and a twin.
  const escrowCreate = (spec: Record<string, unknown>) =>
    scripted("POST /v1/escrow-checkouts", { path: "/v1/escrow-checkouts", headers: auth(payments), body: body(spec) });
  const escrowCreated = await escrowCreate({ title: "Hand-made chair", price_usd: "120.00", payload: "ships in 5 days", arbiter_evm: escrowArbiter });
  expectStatus(escrowCreated, 201, "an escrow checkout");
  const escrowCheckout = parsed(escrowCreated).id as string;
  expectStatus(await escrowCreate({ title: "Hand-made chair", price_usd: "120.00", payload: "ships in 5 days" }), 422, "the seller as its own arbiter");
  // The escrow faces (the checkout is unarmed, so both settle simulated into test escrows): the 402, a deposit prepared,
  // signed as a wallet signs typed data and paid (then presented again), its status and handoff; then the buyer's actions,
  // the seller's escrow routes and the arbiter's ruling on an escalated one.
  const escrowBuyer = privateKeyToAccount(generatePrivateKey());
  const escrowPayments: string[] = [];
  for (const face of ["/test", ""]) {
    const path = `/e/${escrowCheckout}${face}`;
    expectStatus(await scripted(`GET /e/{id}${face}`, { path }), 402, `GET /e/{id}${face} unpaid`);
    const prepared = await scripted(`POST /e/{id}${face}/prepare`, { path: `${path}/prepare`, body: body({ payer: escrowBuyer.address }) });
    expectStatus(prepared, 200, `POST /e/{id}${face}/prepare`);
    const stub = parsed(prepared).payload_stub;
    const header = encodeHeader(
      await signEscrowDeposit(escrowBuyer, {
        requirement: stub.accepted,
        authorization: stub.payload.authorization,
        resourceUrl: stub.resource.url,
        salt: stub.payload.salt,
      }),
    );
    const deposited = await scripted(`GET /e/{id}${face}`, { path: `${path}?h=${nonce}`, headers: { "payment-signature": header } });
    expectStatus(deposited, 200, `GET /e/{id}${face} paid`);
    escrowPayments.push(parsed(deposited).escrow.payment_id as string);
    expectStatus(await scripted(`POST /e/{id}${face}/pay`, { path: `${path}/pay`, headers: { "payment-signature": header } }), 200, `POST /e/{id}${face}/pay`);
  }
  const [heldEscrow, escalatedEscrow] = escrowPayments as [string, string];
  expectStatus(await scripted("GET /e/{id}/status", { path: `/e/${escrowCheckout}/status?payment_id=${heldEscrow}` }), 200, "an escrow's status");
  expectStatus(await scripted("GET /e/{id}/handoff/{nonce}", { path: `/e/${escrowCheckout}/handoff/${nonce}` }), 200, "an escrow's handoff");
  const escrowAct = async (paymentId: string, action: string) => {
    const actionPath = `/e/${escrowCheckout}/actions/${action}`;
    const prepared = await scripted("POST /e/{id}/actions/{action}", { path: `${actionPath}?payment_id=${paymentId}` });
    expectStatus(prepared, 200, `escrow action ${action} prepared`);
    const submitted = await scripted("POST /e/{id}/actions/{action}/submit", {
      path: `${actionPath}/submit?payment_id=${paymentId}`,
      body: body(await signedEscrowAction(escrowBuyer, parsed(prepared))),
    });
    expectStatus(submitted, 200, `escrow action ${action} submitted`);
  };
  await escrowAct(escalatedEscrow, "hold");
  await escrowAct(escalatedEscrow, "request-refund");
  expectStatus(await scripted("GET /v1/escrows", { path: "/v1/escrows?status=escalated", headers: auth(readOnly) }), 200, "the escrows list");
  expectStatus(await scripted("GET /v1/escrows/{payment_id}", { path: `/v1/escrows/${heldEscrow}`, headers: auth(readOnly) }), 200, "one escrow");
  expectStatus(
    await scripted("POST /v1/escrows/{payment_id}/resolve", { path: `/v1/escrows/${escalatedEscrow}/resolve?to_seller=false`, headers: auth(payments) }),
    200,
    "an arbiter's ruling prepared",
  );
  expectStatus(
    await scripted("POST /v1/escrows/{payment_id}/resolve/submit", {
      path: `/v1/escrows/${escalatedEscrow}/resolve/submit?to_seller=false`,
      headers: auth(payments),
    }),
    409,
    "a relayed ruling (Solana only)",
  );
  expectStatus(
    await escrowCreate({ title: "Held article", price_usd: "0.10", payload: "text", content: {}, arbiter_evm: escrowArbiter }),
    400,
    "escrow with content",
  );
  // A recurring series, bought on the rehearsal face (period 0 and the held periods signed in one purchase), then
  // read and cancelled by the seller and by the buyer (ADR 20).
  const seriesCreated = await scripted("POST /v1/checkouts", {
    path: "/v1/checkouts",
    headers: auth(payments),
    body: body({ title: "Weekly digest", price_usd: "0.50", payload: "issue 1", schedule_interval_days: 7, schedule_periods: 4, reusable: true }),
  });
  expectStatus(seriesCreated, 201, "a series checkout");
  const seriesCheckout = parsed(seriesCreated).id as string;
  const buySeries = async (buyer: PrivateKeyAccount) => {
    const prepared = await scripted("POST /c/{id}/test/prepare", { path: `/c/${seriesCheckout}/test/prepare`, body: body({ payer: buyer.address }) });
    expectStatus(prepared, 200, "a series prepared");
    const sign = async (p: { typed_data: TypedDataJson; payload_stub: { payload: object } }) => ({
      ...p.payload_stub,
      payload: { ...p.payload_stub.payload, signature: await signTypedJson(buyer, p.typed_data) },
    });
    const answer = parsed(prepared);
    const schedule = await Promise.all((answer.schedule as never[]).map(sign));
    const bought = await scripted("POST /c/{id}/test/pay", {
      path: `/c/${seriesCheckout}/test/pay`,
      headers: { "payment-signature": encodeHeader((await sign(answer)) as never) },
      body: body({ schedule }),
    });
    expectStatus(bought, 200, "a series bought");
    const id = parsed(bought).schedule.id as string;
    // The series is the schedules service's once it has taken period 0's payment.settled.
    for (let i = 0; i < 100; i++) {
      const seen = await send(baseUrl(), { method: "GET", path: `/v1/schedules/${id}`, headers: { ...auth(readOnly), accept: "application/json" } });
      if (seen.status === 200) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    return id;
  };
  const seriesBuyer = privateKeyToAccount(generatePrivateKey());
  const [keptSeries, sellerCancelled] = [await buySeries(seriesBuyer), await buySeries(seriesBuyer)];
  expectStatus(await scripted("GET /v1/schedules", { path: `/v1/schedules?checkout_id=${seriesCheckout}`, headers: auth(readOnly) }), 200, "the series list");
  expectStatus(await scripted("GET /v1/schedules/{id}", { path: `/v1/schedules/${keptSeries}`, headers: auth(readOnly) }), 200, "one series");
  expectStatus(await scripted("GET /schedule/{slug}", { path: `/schedule/${keptSeries}` }), 200, "a series' buyer view");
  expectStatus(
    await scripted("POST /v1/schedules/{id}/cancel", {
      path: `/v1/schedules/${sellerCancelled}/cancel`,
      headers: auth(payments),
      body: body({ reason: "retired" }),
    }),
    200,
    "the seller's cancel",
  );
  expectStatus(
    await scripted("POST /schedule/{id}/cancel", { path: `/schedule/${keptSeries}/cancel`, body: body({ payer: seriesBuyer.address }) }),
    200,
    "the buyer's cancel of a test-mode series",
  );
  // Both faces of the article: the 402 (v2, v1, the wall), then a purchase answering a pass (the live face settles simulated until go-live).
  const articlePayments: Record<string, string> = {};
  for (const face of ["/test", ""]) {
    const op = `GET /x/{id}${face}`;
    const path = `/x/${article}${face}`;
    const unpaidArticle = await scripted(op, { path });
    expectStatus(unpaidArticle, 402, `${op} unpaid`);
    if (face) captured.articleRequired = unpaidArticle;
    expectStatus(await scripted(op, { path: `${path}?x402_version=1` }), 402, `${op} unpaid, v1`);
    expectStatus(await scripted(op, { path, headers: { accept: "text/html" } }), 402, `${op} wall`);
    const articleRequirement = requirementOf(unpaidArticle);
    if (articleRequirement.extra.rehearsal !== true) throw new Error(`setup: ${op} of an unarmed article must settle simulated`);
    articlePayments[face] = await paymentFor(articleRequirement);
    const bought = await scripted(op, { path, headers: { "payment-signature": articlePayments[face]! } });
    expectStatus(bought, 200, `${op} bought`);
    if (face) captured.articlePurchase = bought;
    expectStatus(await scripted(`POST /x/{id}${face}/prepare`, { path: `${path}/prepare`, body: body({ payer: wallet.address }) }), 200, `${op} prepare`);
  }
  const grant = parsed(captured.articlePurchase!).grant as string;
  // The POST twins: the same payments presented again (redelivered), the unpaid 402, and a read with the pass.
  for (const face of ["/test", ""]) {
    const op = `POST /x/{id}${face}/pay`;
    const path = `/x/${article}${face}/pay`;
    expectStatus(await scripted(op, { path, headers: { "payment-signature": articlePayments[face]! } }), 200, `${op} paid`);
    expectStatus(await scripted(op, { path, body: body({}) }), 402, `${op} unpaid`);
    expectStatus(await scripted(op, { path, headers: { "x-service-grant": grant } }), 200, `${op} with a pass`);
  }
  // Reads with the pass: by header, by query (the live face of an unarmed article is a rehearsal face), a JSON article (the pass is
  // seller-wide), a browser; a pass refused; a limited pass used up; a withdrawn article (410).
  const read = (op: string, path: string, pass: string, status: number, what: string, headers: Record<string, string> = {}) =>
    scripted(op, { path, headers: { "x-service-grant": pass, ...headers } }).then((r) => expectStatus(r, status, what));
  await read("GET /x/{id}/test", `/x/${article}/test`, grant, 200, "an article read with its pass");
  await read("GET /x/{id}/test", `/x/${article}/test`, grant, 200, "an article read with its pass, by a browser", { accept: "text/html" });
  await read("GET /x/{id}/test", `/x/${jsonArticle}/test`, grant, 200, "a JSON article read with a seller-wide pass");
  await read("GET /x/{id}/test", `/x/${article}/test`, "gp1.none.e30.AAAA", 402, "a pass refused");
  expectStatus(await scripted("GET /x/{id}", { path: `/x/${article}?grant=${grant}` }), 200, "an article read with its pass in the query");
  // Passes the seller issues: with a test key they open rehearsal faces only, which the unarmed live face is.
  const issue = async (op: string, path: string, spec: Record<string, unknown>, what: string) => {
    const r = await scripted(op, { path, headers: auth(payments), body: body(spec) });
    expectStatus(r, 201, what);
    return parsed(r).grant as string;
  };
  const contentGrant = { subject: "reviewer", scope: "content", uses: 1 };
  const limited = await issue("POST /v1/content/{id}/grants", `/v1/content/${article}/grants`, contentGrant, "a pass to one article, for one read");
  await read("GET /x/{id}/test", `/x/${article}/test`, limited, 200, "a limited pass's read");
  await read("GET /x/{id}/test", `/x/${article}/test`, limited, 402, "a limited pass used up");
  const sellerPass = await issue("POST /v1/grants", "/v1/grants", { subject: "subscriber" }, "a seller-wide pass");
  await read("GET /x/{id}", `/x/${jsonArticle}`, sellerPass, 200, "a JSON article read with the seller's pass");
  // A relay article: its origin (the package's loopback one) answers the purchase and each read with a pass.
  const relayArticle = await create(payments, { ...articleSpec, title: "From the origin", origin_url: `${packageOrigin.url}/html` });
  const relayQuote = await scripted("GET /x/{id}/test", { path: `/x/${relayArticle}/test` });
  const relayPurchase = await scripted("GET /x/{id}/test", {
    path: `/x/${relayArticle}/test?lang=fr`,
    headers: { "payment-signature": await paymentFor(requirementOf(relayQuote)) },
  });
  expectStatus(relayPurchase, 200, "a relay article bought");
  await read("GET /x/{id}/test", `/x/${relayArticle}/test?lang=fr`, grant, 200, "a relay article read with a pass");
  expectStatus(await scripted("GET /x/{id}/snippet", { path: `/x/${article}/snippet` }), 200, "the snippet");
  // The embed script's diagnostic: a check of an article and of a checkout (200), a page origin that is none (422).
  expectStatus(await scripted("GET /embed/check", { path: `/embed/check?checkout_id=${article}&origin=https%3A%2F%2Fshop.example` }), 200, "an embed check");
  expectStatus(await scripted("GET /embed/check", { path: `/embed/check?checkout_id=${single}&origin=http%3A%2F%2F127.0.0.1%3A5173` }), 200, "an embed check");
  expectStatus(await scripted("GET /embed/check", { path: `/embed/check?checkout_id=${single}&origin=shop.example` }), 422, "an embed check of no origin");
  expectStatus(await scripted("GET /v1/content/{id}", { path: `/v1/content/${article}`, headers: auth(readOnly) }), 200, "an article read back");
  expectStatus(await scripted("GET /v1/content/{id}", { path: `/v1/content/${single}`, headers: auth(readOnly) }), 404, "a checkout that is no article");
  const withdrawn = await create(payments, { ...articleSpec, title: "Withdrawn", payload: "<p>Gone.</p>" });
  expectStatus(await scripted("DELETE /v1/checkouts/{id}", { path: `/v1/checkouts/${withdrawn}`, headers: auth(payments) }), 200, "an article withdrawn");
  expectStatus(await scripted("GET /x/{id}/snippet", { path: `/x/${withdrawn}/snippet` }), 410, "a withdrawn article's snippet");
  await read("GET /x/{id}/test", `/x/${withdrawn}/test`, grant, 410, "a withdrawn article read with a pass");

  const example = doc.paths["/x402/{family}/verify"].post.requestBody.content["application/json"].example;
  for (const family of ["base", "stellar", "solana"]) {
    await scripted("GET /x402/{family}/supported", { path: `/x402/${family}/supported` });
    await scripted("POST /x402/{family}/verify", { path: `/x402/${family}/verify`, body: body(example) });
    await scripted("POST /x402/{family}/settle", { path: `/x402/${family}/settle`, body: body(example) });
  }

  return {
    keys,
    ...(revoked ? { revokedKey: revoked.secret } : {}),
    params: {
      id: [single, reusable, armed, foreign],
      // The reusable checkout stays unarmed, so a simulated payment on its live face keeps redelivering.
      "POST /v1/checkouts/{id}/go-live id": [single, armed, foreign],
      key_id: sacrificial,
      payment_id: [receipt.id],
      // The escrow faces, their actions and the seller's escrow routes name escrows.
      ...Object.fromEntries(fuzzer.ops.filter((o) => /^\/e\//.test(o.template)).map((o) => [`${o.id} id`, [escrowCheckout]])),
      ...Object.fromEntries(fuzzer.ops.filter((o) => /^\/v1\/escrows\//.test(o.template)).map((o) => [`${o.id} payment_id`, escrowPayments])),
      action: ["hold", "approve", "request-refund", "cancel"],
      report_id: [parsed(anonymousReport).id, parsed(buyerReport).id],
      secret_id: [parsed(keptOriginKey).id],
      // Webhook routes name their receiver {id}: the kept one (the deleted one for DELETE, so the fuzz deletes nothing more).
      "DELETE /v1/webhooks/{id} id": [parsed(doomedWebhook).id],
      "GET /v1/webhooks/{id}/deliveries id": [parsed(keptWebhook).id],
      "GET /v1/webhooks/{id}/deliveries/{delivery_id} id": [parsed(keptWebhook).id],
      delivery_id: [deliveryId],
      tx_hash: [receipt.tx_hash],
      nonce: [nonce],
      family: ["base", "stellar", "solana"],
      slug: [ownSlug, slug],
      // The article faces, its snippet, its read-back and its passes name the articles.
      ...Object.fromEntries(fuzzer.ops.filter((o) => /^\/(x|v1\/content)\//.test(o.template)).map((o) => [`${o.id} id`, [article, jsonArticle, relayArticle]])),
    },
    // A pass that opens every article on both faces (a rehearsal's, seller-wide, no read limit): a read with it answers 200.
    query: {
      cursor: cursors,
      price_usd: ["0.10", "0.000001", "1000000"],
      grant: [grant],
      payment_id: escrowPayments,
      to_seller: ["true", "false"],
      // An embed check of an existing checkout or article, from a page origin (answers 200).
      checkout_id: [single, article],
      origin: ["https://shop.example", "http://127.0.0.1:5173"],
    },
    passQuery: ["grant"],
    payments: [
      { template: "/c/{id}/test", params: { id: reusable }, header: payment },
      { template: "/c/{id}", params: { id: reusable }, header: livePayment },
      { template: "/c/{id}/test/pay", params: { id: reusable }, header: payment },
      { template: "/c/{id}/pay", params: { id: reusable }, header: livePayment },
      { template: "/x/{id}/test", params: { id: article }, header: articlePayments["/test"]! },
      { template: "/x/{id}", params: { id: article }, header: articlePayments[""]! },
      { template: "/x/{id}/test/pay", params: { id: article }, header: articlePayments["/test"]! },
      { template: "/x/{id}/pay", params: { id: article }, header: articlePayments[""]! },
    ],
  };
}

function failIfAny(kind: string): void {
  const failures = fuzzer.findings.failures(kind);
  if (failures.length) throw new Error(`${fuzzer.findings.report(kind)}\n\nseed ${SEED}, ${RUNS} runs per operation`);
}

describe(`the REST API conforms to its OpenAPI document (G22, ${RUNS} runs per operation and kind)`, () => {
  beforeAll(async () => {
    const r = await send(baseUrl(), { method: "GET", path: "/openapi.json", headers: { accept: "application/json" } });
    if (r.status !== 200) throw new Error(`GET /openapi.json answered ${r.status}`);
    doc = JSON.parse(r.text) as Doc;
    fuzzer = new Fuzzer(doc, {
      baseUrl: baseUrl(),
      runs: RUNS,
      seed: SEED,
      fixtures: { keys: [], params: {}, query: {}, payments: [] },
      ...(process.env.C402_FUZZ_ONLY ? { only: process.env.C402_FUZZ_ONLY } : {}),
      ...(process.env.C402_FUZZ_PATH ? { path: process.env.C402_FUZZ_PATH } : {}),
    });
    fuzzer.useFixtures(await setUp());
    if (process.env.C402_FUZZ_ONLY) process.stderr.write(`replaying ${process.env.C402_FUZZ_ONLY} only: every other property is skipped\n`);
  }, 120_000);

  afterAll(async () => {
    await mcpServer?.close();
    await packageOrigin?.close();
    await webhookReceiver?.close();
    if (!fuzzer) return;
    process.stdout.write(
      `\nOpenAPI fuzz (${process.env.E2E_RUN_MODE ?? "?"} mode, seed ${SEED}, ${RUNS} runs): answers per operation\n${fuzzer.findings.coverage()}\n`,
    );
    if (process.env.C402_FUZZ_REPORT) {
      writeFileSync(
        process.env.C402_FUZZ_REPORT,
        JSON.stringify(
          {
            mode: process.env.E2E_RUN_MODE,
            seed: SEED,
            runs: RUNS,
            requests: fuzzer.findings.stats.requests,
            statuses: fuzzer.findings.stats.statuses,
            failures: fuzzer.findings.failures().map((f) => ({
              key: f.key,
              count: f.count,
              ...f.first,
              request: { ...f.first.request, body: f.first.request.body?.toString("utf8").slice(0, 2_000) },
            })),
          },
          null,
          2,
        ),
      );
    }
  });

  it("the document is well-formed: every $ref resolves, every response names its content type and schema", () => {
    expect(documentProblems(doc)).toEqual([]);
    for (const op of fuzzer.ops.filter((o) => o.body?.example !== undefined)) {
      expect([op.id, fuzzer.validator.errors(op.body!.pointer, op.body!.example)]).toEqual([op.id, ""]);
    }
    for (const op of fuzzer.ops.filter((o) => o.secured))
      expect([op.id, op.minimumScope]).toEqual([op.id, expect.stringMatching(/^(read_only|payments|full)$/)]);
  });

  it("the checks are not vacuous: drifted answers are caught", () => {
    const problem = (status: number, slug: string) => ({
      type: `http://127.0.0.1/problems/${slug}`,
      title: slug,
      status,
      detail: { message: "m", help: { fix: "f", prepare: null, retry_is_safe: false } },
      help: { fix: "f", prepare: null, retry_is_safe: false },
    });
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}, type = "application/json"): HttpResponse => ({
      status,
      headers: { "content-type": `${type}; charset=utf-8`, ...headers },
      text: typeof body === "string" ? body : JSON.stringify(body),
      ms: 0,
    });
    const violations = (opId: string, res: HttpResponse, mustReject = false) =>
      fuzzer.checker.violations({ op: fuzzer.op(opId), req: { method: "GET", path: "/", headers: {} }, mutation: "self-test", mustReject }, res).join("; ");
    const drifted = (r: HttpResponse, edit: (body: any) => void) => {
      const body = JSON.parse(r.text);
      edit(body);
      return { ...r, text: JSON.stringify(body) };
    };
    // Controls: the real answers conform.
    expect(violations("GET /v1/checkouts", captured.checkouts!)).toBe("");
    expect(violations("GET /v1/keys", captured.keys!)).toBe("");
    expect(violations("GET /c/{id}/test", captured.rehearsal!)).toBe("");
    expect(violations("GET /c/{id}/test", captured.paid!)).toBe("");
    expect(violations("GET /v1/platform/quote", captured.quote!)).toBe("");
    expect(violations("GET /health/facilitator", captured.facilitatorHealth!)).toBe("");
    expect(violations("GET /v1/reports", captured.reports!)).toBe("");
    expect(violations("GET /x/{id}/test", captured.articleRequired!)).toBe("");
    expect(violations("GET /x/{id}/test", captured.articlePurchase!)).toBe("");
    // An article face's 200 JSON may be a JSON article verbatim (any value): the purchase is held to ArticlePurchase here.
    const articlePurchase = (r: HttpResponse) => fuzzer.validator.errors("/components/schemas/ArticlePurchase", parsed(r));
    expect(articlePurchase(captured.articlePurchase!)).toBe("");
    // Drift in shapes.
    expect(
      violations(
        "GET /v1/checkouts",
        drifted(captured.checkouts!, (b) => (b.checkouts[0].payload = { goods: 1 })),
      ),
    ).toMatch(/does not match its schema/);
    expect(
      violations(
        "GET /v1/checkouts",
        drifted(captured.checkouts!, (b) => delete b.has_more),
      ),
    ).toMatch(/does not match its schema/);
    expect(
      violations(
        "GET /v1/keys",
        drifted(captured.keys!, (b) => (b.keys[0].secret = "sk_test_leaked")),
      ),
    ).toMatch(/does not match its schema/);
    expect(
      violations(
        "GET /c/{id}/test",
        drifted(captured.rehearsal!, (b) => (b.accepts[0].extra.name = "USDC")),
      ),
    ).toMatch(/does not match its schema/);
    expect(
      violations(
        "GET /c/{id}/test",
        drifted(captured.rehearsal!, (b) => (b.x402Version = 3)),
      ),
    ).toMatch(/does not match its schema/);
    expect(
      violations(
        "GET /c/{id}/test",
        drifted(captured.paid!, (b) => (b.receipt.total = "110500")),
      ),
    ).toMatch(/does not match its schema/);
    expect(
      violations(
        "GET /x/{id}/test",
        drifted(captured.articleRequired!, (b) => delete b.endpoint.article),
      ),
    ).toMatch(/does not match its schema/);
    expect(
      violations(
        "GET /x/{id}/test",
        drifted(captured.articleRequired!, (b) => (b.endpoint.article.pass.header = "Authorization")),
      ),
    ).toMatch(/does not match its schema/);
    expect(articlePurchase(drifted(captured.articlePurchase!, (b) => (b.grant_scope = "everything")))).not.toBe("");
    expect(articlePurchase(drifted(captured.articlePurchase!, (b) => delete b.grant_expires_in))).not.toBe("");
    expect(
      violations(
        "GET /v1/platform/quote",
        drifted(captured.quote!, (b) => (b.buyer_pays = "0.1105")),
      ),
    ).toMatch(/does not match its schema/);
    expect(
      violations(
        "GET /health/facilitator",
        drifted(captured.facilitatorHealth!, (b) => delete b.chains.solana.reason),
      ),
    ).toMatch(/does not match its schema/);
    expect(
      violations(
        "GET /v1/reports",
        drifted(captured.reports!, (b) => (b.reports[0].account_id = "acct_leaked")),
      ),
    ).toMatch(/does not match its schema/);
    // Statuses, content types, headers, problem slugs.
    expect(violations("GET /v1/checkouts", answer(500, problem(500, "internal"), {}, "application/problem+json"))).toMatch(/server error 500/);
    expect(violations("GET /v1/checkouts", answer(418, problem(418, "teapot"), {}, "application/problem+json"))).toMatch(/not documented/);
    expect(violations("GET /v1/checkouts", { ...captured.checkouts!, headers: { "content-type": "text/html" } })).toMatch(/Content-Type/);
    expect(violations("GET /v1/checkouts", answer(401, problem(401, "unauthenticated"), {}, "application/problem+json"))).toMatch(/www-authenticate missing/);
    expect(violations("GET /v1/checkouts/{id}", answer(404, problem(404, "gone"), {}, "application/problem+json"))).toMatch(/does not match its schema/);
    expect(violations("GET /v1/checkouts/{id}", answer(404, problem(404, "not-found"), {}, "application/json"))).toMatch(/Content-Type/);
    expect(violations("GET /v1/checkouts", captured.checkouts!, true)).toMatch(/must be refused/);
  });

  it("the setup's own requests (sign-up, sign-in, keys, checkouts, go-live, faces, a rehearsal payment, receipts, facilitator) conform", () => {
    failIfAny("scripted");
  });

  it(
    "valid requests to every operation get documented answers",
    async () => {
      await fuzzer.all("valid");
      failIfAny("valid");
    },
    LONG,
  );

  it(
    "mutated requests (bodies, path and query parameters, headers, credentials, payments) get documented 4xx answers, never a 5xx",
    async () => {
      await fuzzer.all("mutated");
      failIfAny("mutated");
    },
    LONG,
  );

  it(
    "the sweep: every path parameter, every field of each example body and of a paid payment, set to each hostile value, never gets a 5xx",
    async () => {
      await fuzzer.sweep();
      failIfAny("sweep");
    },
    LONG,
  );

  it(
    "a known path with another method answers 405 with Allow; an unknown path answers 404",
    async () => {
      await fuzzer.wrongMethods();
      await fuzzer.unroutedPaths(RUNS * 2);
      failIfAny("wrong-method");
      failIfAny("unrouted");
    },
    LONG,
  );

  it("every operation answered at least one documented success (2xx/3xx)", () => {
    const missing = fuzzer.ops
      .filter((op) => !NEVER_SUCCEEDS_HERE.includes(op.id))
      .filter((op) => !Object.keys(fuzzer.findings.stats.statuses[op.id] ?? {}).some((s) => /^[23]/.test(s)))
      .map((op) => op.id);
    expect(missing).toEqual([]);
  });

  it("the service is still healthy", async () => {
    const r = await send(baseUrl(), { method: "GET", path: "/health?deep=true", headers: { accept: "application/json" } });
    expect(JSON.parse(r.text).status).toBe("ok");
  });
});
