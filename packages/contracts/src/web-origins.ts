/**
 * The hosts a plain-http URL may name (a developer's machine): OAuth redirect
 * URIs, embed origins and an article's canonical URL (whose origin may frame
 * it) alike; everything else must be https.
 */
export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(["localhost", "127.0.0.1", "[::1]"]);
