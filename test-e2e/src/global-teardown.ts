export default async function globalTeardown(): Promise<void> {
  await globalThis.__C402_E2E_TARGET__?.stop();
  await globalThis.__C402_E2E_COLLECTOR__?.close();
}
