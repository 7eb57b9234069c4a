#!/usr/bin/env node
/**
 * grpc_health_probe in a few lines, for container health checks (compose) where
 * Kubernetes' native gRPC probe is not available:
 *
 *   node packages/rpc/bin/grpc-health-probe.cjs 127.0.0.1:50051 [service]
 *
 * Exits 0 when grpc.health.v1 Check answers SERVING within 3 s, 1 otherwise
 * (NOT_SERVING, unknown service, nothing listening, timeout). Plain CommonJS so
 * a probe costs a bare `node` start, not a TypeScript loader's.
 */
const grpc = require("@grpc/grpc-js");
const { service } = require("grpc-health-check");

const [address, name = ""] = process.argv.slice(2);
if (!address) {
  process.stderr.write("usage: grpc-health-probe.cjs host:port [service]\n");
  process.exit(2);
}
const Health = grpc.makeGenericClientConstructor(service, "Health");
const client = new Health(address, grpc.credentials.createInsecure());
client.check({ service: name }, { deadline: Date.now() + 3_000 }, (err, res) => {
  const status = err ? `error: ${err.details || err.message}` : res.status;
  process.stdout.write(`${address} ${name || "(server)"}: ${status}\n`);
  client.close();
  process.exit(!err && res.status === "SERVING" ? 0 : 1);
});
