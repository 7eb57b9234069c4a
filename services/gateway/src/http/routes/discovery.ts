import { dirname } from "node:path";
import { ProblemError } from "@c402/problems";
import { Router } from "express";
import { DOCS_ASSETS, DOCS_PAGE_HEADERS, DOCS_SCRIPT, docsPage, llmsText, rootView, wellKnownView, type DocsAsset, type Rails } from "../../views/discovery";
import { svmRehearsalNetwork } from "@c402/x402";
import { openApiDocument } from "../../views/openapi";
import type { GatewayDeps } from "../deps";
import { REHEARSAL_NETWORK, type SettlementRails } from "../rails";

/** Where the Swagger UI files the /docs page uses are installed (the swagger-ui-dist package). */
const SWAGGER_UI_DIR = dirname(require.resolve("swagger-ui-dist/package.json"));
/** The viewer's files change only with the package's version: browsers may keep them a day. */
const DOCS_ASSET_MAX_AGE_SECONDS = 86_400;
/** When a degraded deep health check is worth asking again. */
const HEALTH_RETRY_AFTER_SECONDS = 5;
/** Where a Stellar rehearsal is quoted (payments' rehearsalStellarNetwork, ADR 5): always Stellar's testnet. */
const STELLAR_REHEARSAL_NETWORK = "stellar:testnet";

/**
 * What the service is: /, /openapi.json, /llms.txt, /docs (and its viewer's
 * files), /.well-known/<name>, /health. The documents list the networks
 * `rails` says this run settles on.
 */
export function discoveryRoutes({ clients, cache, settings, logger }: GatewayDeps, rails: SettlementRails): Router {
  const router = Router();
  const { baseUrl, serviceName, version } = settings;
  const railsNow = async (): Promise<Rails> => {
    const live = await rails.known();
    // Rehearsals are quoted on the EVM testnet, on a Solana testnet where Solana settles live, and on Stellar's
    // testnet where Stellar does, whatever its live network (ADR 5).
    const solana = [...new Set((live?.solana ?? []).map(svmRehearsalNetwork))];
    const stellar = (live?.stellar ?? []).length > 0 ? [STELLAR_REHEARSAL_NETWORK] : [];
    return { live: live ? Object.values(live).flat() : [], rehearsal: [REHEARSAL_NETWORK, ...solana, ...stellar] };
  };

  router.get("/", async (_req, res) => {
    res.json(rootView(settings, await railsNow()));
  });

  router.get("/openapi.json", (_req, res) => {
    res.json(openApiDocument(baseUrl, version, serviceName));
  });

  router.get("/llms.txt", async (_req, res) => {
    res.type("text/plain").send(llmsText(serviceName, await railsNow()));
  });

  router.get("/docs", (_req, res) => {
    for (const [name, value] of DOCS_PAGE_HEADERS) res.setHeader(name, value);
    res.type("html").send(docsPage(serviceName));
  });

  router.get("/docs/assets/:file", (req, res, next) => {
    const file = req.params.file;
    if (!Object.hasOwn(DOCS_ASSETS, file)) throw new ProblemError("not-found", "No such file of the documentation viewer.");
    res.setHeader("Cache-Control", `public, max-age=${DOCS_ASSET_MAX_AGE_SECONDS}`);
    res.type(DOCS_ASSETS[file as DocsAsset]);
    if (file === "docs.js") res.send(DOCS_SCRIPT);
    // Relative to the package's folder: pnpm installs it under node_modules/.pnpm, a dot-folder `send` would refuse.
    else res.sendFile(file, { root: SWAGGER_UI_DIR }, (err) => err && next(err));
  });

  router.get(`/.well-known/${serviceName}`, async (_req, res) => {
    res.json(wellKnownView(settings, await railsNow()));
  });

  router.get("/health", async (req, res) => {
    const base = { service: serviceName, version, run_mode: settings.runMode };
    if (!["true", "1"].includes(String(req.query.deep))) {
      res.json({ status: "ok", ...base });
      return;
    }
    // Never raises: every component reports ok or down. Why one is down goes to the log with the
    // request id, never to this public answer (an error's text can name hosts, users or versions).
    const components: Record<string, unknown> = {};
    const down = (component: string, err: unknown) => {
      logger.warn({ request_id: req.requestId, component, reason: err instanceof Error ? err.message : String(err) }, "health: a component is down");
      return { status: "down" };
    };
    const cacheStarted = Date.now();
    components.cache = await cache.ping().then(
      () => ({ status: "ok", latency_ms: Date.now() - cacheStarted }),
      (err: unknown) => down("cache", err),
    );
    await Promise.all(
      Object.entries(clients.health).map(async ([name, client]) => {
        try {
          const r = await client.check({}, { timeoutMs: 3_000 });
          for (const c of r.components) if (c.status !== "ok") down(`${name}.${c.name}`, c.detail || c.status);
          components[name] = {
            status: r.components.every((c) => c.status === "ok") ? "ok" : "down",
            components: Object.fromEntries(r.components.map((c) => [c.name, { status: c.status, latency_ms: c.latencyMs }])),
          };
        } catch (err) {
          components[name] = down(name, err);
        }
      }),
    );
    const allOk = Object.values(components).every((c) => (c as { status: string }).status === "ok");
    // 503 while a dependency is down, so a load balancer or an operator's probe of ?deep=true sees it; the body says which.
    if (!allOk) res.setHeader("Retry-After", String(HEALTH_RETRY_AFTER_SECONDS));
    res.status(allOk ? 200 : 503).json({ status: allOk ? "ok" : "degraded", ...base, components, ...(settings.healthExtras ?? {}) });
  });

  return router;
}
