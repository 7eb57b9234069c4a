import { randomBytes, webcrypto } from "node:crypto";
import * as x509 from "@peculiar/x509";

/**
 * Test-only TLS material. The official Stellar client refuses a plain-http RPC
 * URL, so the stand-in serves HTTPS on loopback with a certificate issued at
 * start by a throwaway certificate authority. Nothing here is a secret worth
 * keeping: the CA signs only loopback names and lives as long as its holder.
 */
export interface TestCertificateAuthority {
  certificatePem: string;
  /** PKCS#8 PEM. */
  privateKeyPem: string;
}

export interface ServerCertificate {
  certificatePem: string;
  keyPem: string;
}

const ALGORITHM = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
const DAY_MS = 24 * 60 * 60 * 1000;
/** Clocks of two processes on one machine may differ a little: certificates are valid from an hour ago. */
const CLOCK_SKEW_MS = 60 * 60 * 1000;

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

function serialNumber(): string {
  // Positive (high bit clear), 16 random bytes, as RFC 5280 asks.
  const bytes = randomBytes(16);
  bytes[0] = bytes[0]! & 0x7f;
  return bytes.toString("hex");
}

function toPem(der: ArrayBuffer, label: string): string {
  const base64 = Buffer.from(der).toString("base64");
  return `-----BEGIN ${label}-----\n${base64.match(/.{1,64}/g)!.join("\n")}\n-----END ${label}-----\n`;
}

function fromPem(pem: string): Buffer {
  return Buffer.from(pem.replace(/-----(BEGIN|END) [A-Z ]+-----/g, "").replace(/\s+/g, ""), "base64");
}

/** A new certificate authority (ECDSA P-256), valid for `validDays` (default 365). */
export async function createTestCertificateAuthority(validDays = 365): Promise<TestCertificateAuthority> {
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"]);
  const now = Date.now();
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: "CN=c402 Stellar stand-in test CA (test only)",
    notBefore: new Date(now - CLOCK_SKEW_MS),
    notAfter: new Date(now + validDays * DAY_MS),
    signingAlgorithm: ALGORITHM,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return {
    certificatePem: certificate.toString("pem") + "\n",
    privateKeyPem: toPem(await webcrypto.subtle.exportKey("pkcs8", keys.privateKey), "PRIVATE KEY"),
  };
}

/** A server certificate for 127.0.0.1 and localhost, issued by `authority`, valid no longer than it. */
export async function issueLoopbackCertificate(authority: TestCertificateAuthority): Promise<ServerCertificate> {
  const issuer = new x509.X509Certificate(authority.certificatePem);
  const issuerKey = await webcrypto.subtle.importKey("pkcs8", fromPem(authority.privateKeyPem), ALGORITHM, false, ["sign"]);
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"]);
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: "CN=127.0.0.1",
    issuer: issuer.subject,
    notBefore: new Date(Math.max(Date.now() - CLOCK_SKEW_MS, issuer.notBefore.getTime())),
    notAfter: issuer.notAfter,
    signingAlgorithm: ALGORITHM,
    publicKey: keys.publicKey,
    signingKey: issuerKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        { type: "ip", value: "127.0.0.1" },
        { type: "dns", value: "localhost" },
      ]),
      await x509.AuthorityKeyIdentifierExtension.create(issuer),
    ],
  });
  return {
    certificatePem: certificate.toString("pem") + "\n",
    keyPem: toPem(await webcrypto.subtle.exportKey("pkcs8", keys.privateKey), "PRIVATE KEY"),
  };
}
