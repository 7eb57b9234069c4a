import {
  clone,
  create,
  fromBinary,
  toBinary,
  type DescMessage,
  type DescMethod,
  type DescService,
  type MessageInitShape,
  type Message,
  type MessageShape,
} from "@bufbuild/protobuf";
import { pathToString } from "@bufbuild/protobuf/reflect";
import { createValidator } from "@bufbuild/protovalidate";
import { ProblemError } from "@c402/problems";
import * as grpc from "@grpc/grpc-js";
import { HealthImplementation, type ServingStatus } from "grpc-health-check";
import { rpcClientDuration, rpcServerDuration } from "@c402/metrics";
import { openSpan, SpanKind } from "@c402/tracing";
import { currentContext, isTraceparent, newRequestId, runWithContext, type RequestContext } from "./context";
import { callerOf, type Callers } from "./caller-auth";
import { fromServiceError, toServiceError } from "./errors";

export * from "./context";
export { callerDigest, formatCallers, parseCallers, MIN_TOKEN_LENGTH, type Callers } from "./caller-auth";
export * from "./health";
export { grpcStatusFor, toServiceError, fromServiceError } from "./errors";

/**
 * Turns protobuf-es service descriptors into @grpc/grpc-js registrations and
 * typed promise clients. Every call carries a deadline, the request id and the
 * trace context; errors cross as problem types (see errors.ts).
 */

type MethodsOf<S extends DescService> = S["method"];
type In<M> = M extends { input: infer I extends DescMessage } ? I : never;
type Out<M> = M extends { output: infer O extends DescMessage } ? O : never;

export interface CallContext {
  requestId: string;
  /** The caller the call's token names, on a server that checks callers. */
  caller?: string;
  traceparent?: string;
  /** Absolute deadline of the call, when the caller set one. */
  deadline?: Date;
}

export type ServiceImplementation<S extends DescService> = {
  [K in keyof MethodsOf<S>]: (request: MessageShape<In<MethodsOf<S>[K]>>, ctx: CallContext) => Promise<MessageInitShape<Out<MethodsOf<S>[K]>>>;
};

export interface CallOptions {
  /** Milliseconds before the call fails with DEADLINE_EXCEEDED. */
  timeoutMs?: number;
}

export interface ClientOptions extends CallOptions {
  /** This process's RPC_TOKEN, sent on every call (servers that check callers refuse calls without one they know). */
  token?: string;
}

export type ServiceClient<S extends DescService> = {
  [K in keyof MethodsOf<S>]: (request: MessageInitShape<In<MethodsOf<S>[K]>>, options?: CallOptions) => Promise<MessageShape<Out<MethodsOf<S>[K]>>>;
} & { close(): void };

const DEFAULT_TIMEOUT_MS = 5_000;
const REQUEST_ID = "x-request-id";
const TRACEPARENT = "traceparent";
const AUTHORIZATION = "authorization";

function unaryMethods(service: DescService): DescMethod[] {
  const methods = service.methods.filter((m) => m.methodKind === "unary");
  if (methods.length !== service.methods.length) throw new Error(`${service.typeName}: only unary methods are supported`);
  return methods;
}

function definitionFor(service: DescService): grpc.ServiceDefinition {
  const definition: Record<string, grpc.MethodDefinition<any, any>> = {};
  for (const m of unaryMethods(service)) {
    definition[m.localName] = {
      path: `/${service.typeName}/${m.name}`,
      requestStream: false,
      responseStream: false,
      requestSerialize: (msg: any) => Buffer.from(toBinary(m.input, msg)),
      requestDeserialize: (buf: Buffer) => fromBinary(m.input, buf),
      responseSerialize: (msg: any) => Buffer.from(toBinary(m.output, msg)),
      responseDeserialize: (buf: Buffer) => fromBinary(m.output, buf),
    };
  }
  return definition as grpc.ServiceDefinition;
}

/** One validator per process: it compiles each message's rules once, on first use. */
const validator = createValidator();

/**
 * Refuses a request that breaks its contract's protovalidate rules
 * (INVALID_ARGUMENT, naming each field), before the implementation sees it.
 * The gateway validates what users send first, so this fires only for a
 * caller that breaks the contract: a bug, caught at the boundary.
 */
export function assertValidRequest(schema: DescMessage, message: Message): void {
  const result = validator.validate(schema, message);
  if (result.kind === "valid") return;
  if (result.kind === "error") throw new ProblemError("internal", `The contract's rules for ${schema.typeName} could not be evaluated.`);
  throw new ProblemError("invalid-request", {
    message: `The request breaks the ${schema.typeName} contract.`,
    errors: result.violations.map((v) => ({ field: pathToString(v.field), reason: v.message })),
  });
}

export interface RpcServerOptions {
  onError?: (err: unknown, method: string) => void;
  /**
   * The callers allowed (RPC_CALLERS, parsed): a call without the token of one
   * of them is refused with UNAUTHENTICATED before anything else runs. Unset:
   * every caller is served (tests; the process's composition root sets it).
   * grpc.health.v1 (the probes') never asks.
   */
  callers?: Callers;
  /**
   * The methods a caller may call, by caller name (method as `<package>.<Service>/<Method>`):
   * a caller listed here is refused (PERMISSION_DENIED) any other method; a
   * caller not listed may call every method (the gateway).
   */
  callerMethods?: ReadonlyMap<string, ReadonlySet<string>>;
}

export class RpcServer {
  private readonly server = new grpc.Server({ "grpc.max_receive_message_length": 8 * 1024 * 1024 });
  /**
   * The standard grpc.health.v1 service (Kubernetes' native gRPC probes ask it):
   * NOT_SERVING until the service says it is ready, and again from the moment it
   * starts to stop, for the server as a whole ("") and for each service added.
   */
  private readonly health = new HealthImplementation({ "": "NOT_SERVING" });
  private readonly serviceNames: string[] = [""];
  private readonly local = new Map<string, LocalMethod>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private stopping = false;

  constructor(private readonly opts: RpcServerOptions = {}) {
    this.health.addToServer(this.server);
  }

  add<S extends DescService>(service: S, implementation: ServiceImplementation<S>): this {
    this.serviceNames.push(service.typeName);
    this.health.setStatus(service.typeName, "NOT_SERVING");
    const handlers: grpc.UntypedServiceImplementation = {};
    for (const m of unaryMethods(service)) {
      const impl = (implementation as Record<string, (req: unknown, ctx: CallContext) => Promise<unknown>>)[m.localName];
      if (!impl) throw new Error(`${service.typeName}.${m.name} has no implementation`);
      const method = `${service.typeName}/${m.name}`;
      const serve = this.pipeline(m, method, impl);
      handlers[m.localName] = (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
        const deadline = call.getDeadline();
        serve(call.request as Message, {
          authorization: call.metadata.get(AUTHORIZATION)[0],
          requestId: call.metadata.get(REQUEST_ID)[0],
          traceparent: call.metadata.get(TRACEPARENT)[0],
          deadline: deadline instanceof Date ? deadline : typeof deadline === "number" && Number.isFinite(deadline) ? new Date(deadline) : undefined,
        }).then(
          (res) => callback(null, res),
          (failure: Partial<grpc.ServiceError>) => callback(failure as grpc.ServiceError),
        );
      };
      this.local.set(method, (request, meta) => {
        if (this.stopping) return Promise.reject(UNAVAILABLE);
        const call = serve(request, meta);
        this.inFlight.add(call);
        void call.catch(() => undefined).finally(() => this.inFlight.delete(call));
        return call;
      });
    }
    this.server.addService(definitionFor(service), handlers);
    return this;
  }

  /**
   * What every call of a method goes through, whichever way it came: the
   * caller's token, the call context, the span, the contract's rules, the
   * implementation, the metrics. Rejects with the failure as the wire carries it.
   */
  private pipeline(m: DescMethod, method: string, impl: (req: unknown, ctx: CallContext) => Promise<unknown>) {
    return (request: Message, meta: CallMeta): Promise<Message> => {
      const started = process.hrtime.bigint();
      const ctx = contextFrom(meta);
      if (this.opts.callers) {
        const caller = callerOf(this.opts.callers, meta.authorization);
        if (!caller) {
          rpcServerDuration.observe({ method, code: "UNAUTHENTICATED" }, secondsSince(started));
          // No problem document: to the caller this is a fault of the deployment (an internal error), never a user's 401.
          return Promise.reject({ code: grpc.status.UNAUTHENTICATED, details: "this caller is not allowed to call this service" });
        }
        const allowed = this.opts.callerMethods?.get(caller);
        if (allowed && !allowed.has(method)) {
          rpcServerDuration.observe({ method, code: "PERMISSION_DENIED" }, secondsSince(started));
          return Promise.reject({ code: grpc.status.PERMISSION_DENIED, details: `${caller} is not allowed to call ${method}` });
        }
        ctx.caller = caller;
      }
      const incoming: RequestContext = { requestId: ctx.requestId, traceparent: ctx.traceparent };
      const span = openSpan(method, { kind: SpanKind.SERVER, parent: incoming, attributes: { "rpc.system.name": "grpc", "rpc.method": method } });
      return runWithContext(span.context ?? incoming, async () => {
        assertValidRequest(m.input, request);
        return impl(request, ctx);
      }).then(
        (res) => {
          const answer = create(m.output, res as MessageInitShape<DescMessage>);
          span.end();
          rpcServerDuration.observe({ method, code: "OK" }, secondsSince(started));
          return answer;
        },
        (err: unknown) => {
          this.opts.onError?.(err, method);
          const failure = toServiceError(err);
          const code = failure.code ?? grpc.status.UNKNOWN;
          span.end(isFault(code) ? err : undefined);
          rpcServerDuration.observe({ method, code: grpc.status[code] ?? String(code) }, secondsSince(started));
          throw failure;
        },
      );
    };
  }

  /**
   * This server's services, for clients in the same process (createClient with
   * the channel for an address): each call goes through the same pipeline as
   * one over the network (token, context, span, the contract's rules, errors as
   * problem types, deadline, metrics), without HTTP/2 between two halves of one
   * event loop. Its messages are copied where the wire would encode them
   * (protobuf's clone, a quarter of an encode and decode): neither side ever
   * holds an object of the other's, a cached checkout included.
   */
  inProcess(): InProcessChannel {
    return new InProcessChannel(this.local);
  }

  /** Binds to host:port (0 picks a free port) and returns the bound port. */
  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const address = host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
      this.server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound)));
    });
  }

  /** Reports SERVING on grpc.health.v1: call once the service has started (migrated, its loops running). */
  serving(): void {
    this.report("SERVING");
  }

  /** Reports NOT_SERVING, finishes in-flight calls (up to graceMs), then cuts the rest. */
  stop(graceMs = 5_000): Promise<void> {
    this.report("NOT_SERVING");
    this.stopping = true;
    const inProcess = Promise.allSettled([...this.inFlight]);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.server.forceShutdown();
        resolve();
      }, graceMs);
      this.server.tryShutdown(() => {
        void inProcess.then(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    });
  }

  private report(status: ServingStatus): void {
    for (const name of this.serviceNames) this.health.setStatus(name, status);
  }
}

function contextFrom(meta: CallMeta): CallContext {
  const { requestId, traceparent, deadline } = meta;
  return {
    requestId: typeof requestId === "string" && requestId.length <= 128 ? requestId : newRequestId(),
    ...(isTraceparent(traceparent) ? { traceparent } : {}),
    ...(deadline ? { deadline } : {}),
  };
}

/** A call's metadata, as the caller sent it (unchecked). */
interface CallMeta {
  authorization?: unknown;
  requestId?: unknown;
  traceparent?: unknown;
  deadline?: Date | undefined;
}

/** One method of a server, called in process: the request in, the answer out (or the failure, as the wire carries it); inProcessTransport copies both. */
type LocalMethod = (request: Message, meta: CallMeta) => Promise<Message>;

/** A server's services for callers in its own process (RpcServer.inProcess). */
export class InProcessChannel {
  constructor(readonly methods: ReadonlyMap<string, LocalMethod>) {}
}

const UNAVAILABLE: Partial<grpc.ServiceError> = { code: grpc.status.UNAVAILABLE, details: "the server is stopping" };

/** How a client's call reaches the server: it resolves with the answer, or rejects with the failure as the wire carries it. */
type Send = (request: Message, meta: CallMeta & { deadline: Date }) => Promise<unknown>;

function grpcTransport<S extends DescService>(service: S, address: string) {
  const Ctor = grpc.makeGenericClientConstructor(definitionFor(service), service.typeName);
  const client = new Ctor(address, grpc.credentials.createInsecure(), {
    "grpc.max_receive_message_length": 8 * 1024 * 1024,
    // Spread calls over every address the name resolves to (headless Services in Kubernetes).
    "grpc.service_config": JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
    // A replica restarted by a rollout takes calls again within seconds (the default backoff grows to 120 s), so the
    // rollout's next pod, stopping, never leaves a caller with no ready replica (G36).
    "grpc.initial_reconnect_backoff_ms": 250,
    "grpc.max_reconnect_backoff_ms": 2_000,
  });
  return {
    close: () => client.close(),
    send(m: DescMethod): Send {
      const fn = (client as unknown as Record<string, Function>)[m.localName] as Function;
      return (request, meta) =>
        new Promise((resolve, reject) => {
          const metadata = new grpc.Metadata();
          metadata.set(REQUEST_ID, meta.requestId as string);
          if (typeof meta.traceparent === "string") metadata.set(TRACEPARENT, meta.traceparent);
          if (typeof meta.authorization === "string") metadata.set(AUTHORIZATION, meta.authorization);
          fn.call(client, request, metadata, { deadline: meta.deadline }, (err: grpc.ServiceError | null, res: unknown) => (err ? reject(err) : resolve(res)));
        });
    },
  };
}

function inProcessTransport(channel: InProcessChannel) {
  let closed = false;
  return {
    close: () => void (closed = true),
    send(m: DescMethod, method: string): Send {
      return (request, meta) =>
        new Promise((resolve, reject) => {
          const serve = channel.methods.get(method);
          if (closed || !serve) return reject(closed ? UNAVAILABLE : { code: grpc.status.UNIMPLEMENTED, details: `${method} is not served here` });
          // As over the wire: the caller stops waiting at its deadline, the server's work goes on.
          const timer = setTimeout(() => reject({ code: grpc.status.DEADLINE_EXCEEDED, details: "Deadline exceeded" }), meta.deadline.getTime() - Date.now());
          const copy = clone(m.input, request);
          // The call starts after the I/O waiting meanwhile (other requests' sockets) has had its turn, as a call
          // over the network would: without it, a chain of in-process calls on PGlite (synchronous underneath)
          // could run a whole request in microtasks while the requests that arrived with it wait unread.
          setImmediate(() =>
            serve(copy, meta).then(
              (answer) => {
                clearTimeout(timer);
                resolve(clone(m.output, answer));
              },
              (failure: unknown) => {
                clearTimeout(timer);
                reject(failure);
              },
            ),
          );
        });
    },
  };
}

/**
 * A typed client of a service: at an address (gRPC over HTTP/2), or through a
 * server's InProcessChannel when both run in one process (embedded mode).
 */
export function createClient<S extends DescService>(service: S, target: string | InProcessChannel, defaults: ClientOptions = {}): ServiceClient<S> {
  const authorization = defaults.token ? `Bearer ${defaults.token}` : undefined;
  const transport = typeof target === "string" ? grpcTransport(service, target) : inProcessTransport(target);
  const out: Record<string, unknown> = { close: transport.close };
  for (const m of unaryMethods(service)) {
    const method = `${service.typeName}/${m.name}`;
    const send = transport.send(m, method);
    out[m.localName] = async (request: MessageInitShape<DescMessage>, options: CallOptions = {}) => {
      const started = process.hrtime.bigint();
      const span = openSpan(method, { kind: SpanKind.CLIENT, attributes: { "rpc.system.name": "grpc", "rpc.method": method } });
      const ctx: RequestContext | undefined = span.context ?? currentContext();
      const deadline = new Date(Date.now() + (options.timeoutMs ?? defaults.timeoutMs ?? DEFAULT_TIMEOUT_MS));
      try {
        const res = await send(create(m.input, request), {
          requestId: ctx?.requestId ?? newRequestId(),
          traceparent: ctx?.traceparent,
          authorization,
          deadline,
        });
        rpcClientDuration.observe({ method, code: "OK" }, secondsSince(started));
        span.end();
        return res;
      } catch (failure) {
        const err = failure as grpc.ServiceError;
        rpcClientDuration.observe({ method, code: grpc.status[err.code] ?? String(err.code) }, secondsSince(started));
        span.end(isFault(err.code) ? err : undefined);
        throw fromServiceError(err);
      }
    };
  }
  return out as ServiceClient<S>;
}

/**
 * Whether a call's status is a fault (its span is marked failed): a refusal the
 * caller caused (a 4xx problem) is the call working as designed.
 */
function isFault(code: grpc.status): boolean {
  return [grpc.status.INTERNAL, grpc.status.UNKNOWN, grpc.status.UNAVAILABLE, grpc.status.DEADLINE_EXCEEDED, grpc.status.UNAUTHENTICATED].includes(code);
}

function secondsSince(started: bigint): number {
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/**
 * A message field the answering service always sets (proto3 makes every
 * message field optional in the generated types): its value, or an error
 * naming the field when a service broke that promise.
 */
export function answered<T>(value: T | undefined, field: string): T {
  if (value === undefined) throw new Error(`the service answered without ${field}`);
  return value;
}
