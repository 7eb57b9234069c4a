/**
 * The loopback lab of targets G18–G20 (SSRF): an allowed origin, canaries on
 * 127.0.0.2–.9, ::1 and a unix socket that count every connection they
 * accept, a stub resolver, a net.Socket#connect spy, and the corpus of
 * address strings that must never be reached. Used by @c402/outbound-http's
 * own suites and by every fetcher built on it (relay, MCP, webhooks).
 */
export * from "./address-encodings";
export * from "./blocked-corpus";
export * from "./connect-spy";
export * from "./servers";
