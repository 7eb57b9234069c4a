/** Types of verify.mjs, for callers in TypeScript (the tests). */
export declare const TOLERANCE_SECONDS: number;
export declare function parseSignatureHeader(header: unknown): { t: number; signatures: string[] } | null;
export declare function verifyHmac(rawBody: string, header: unknown, secret: string, nowSeconds?: number): boolean;
export declare function verifyEd25519(rawBody: string, header: unknown, publicKeysPem: readonly string[], nowSeconds?: number): boolean;
