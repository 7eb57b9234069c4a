export default async function globalTeardown(): Promise<void> {
  await globalThis.__C402_E2E_TARGET__?.stop();
}
