export { INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, RpcError } from "./errors";
export { toJsonText } from "./json-text";
export { serveJsonRpc, type NamedRpcMethod, type ParamsShape, type PositionalRpcMethod, type RpcServerOptions, type RunningRpcServer } from "./server";
