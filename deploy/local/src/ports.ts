import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/**
 * The range the kernel draws outgoing connections' local ports from. A server
 * port inside it can be taken while its process restarts: a client retrying
 * the connection may be given that very port as its own and connect to itself
 * (TCP simultaneous open on loopback), and the restarted server then cannot
 * bind. Ports handed out here stay outside it.
 */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
    if (low !== undefined && high !== undefined && Number.isInteger(low) && Number.isInteger(high)) return [low, high];
  } catch {
    // Not Linux: the IANA dynamic range.
  }
  return [49152, 65535];
}

/** Where listening ports are picked: below the ephemeral range when there is room, else above it. */
function listeningRange(): [number, number] {
  const [low, high] = ephemeralRange();
  if (low - 10_000 >= 1_024) return [10_000, low - 1];
  if (high < 65_535 - 1_000) return [high + 1, 65_535];
  return [1_024, 65_535];
}

/** A loopback port that was free a moment ago, outside the ephemeral range (see ephemeralRange), or one the OS picks when none is found. */
export async function freePort(): Promise<number> {
  const [low, high] = listeningRange();
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (await portIsFree(port)) return port;
  }
  return osPickedPort();
}

function osPickedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Whether a loopback port can be bound now: nothing listens on it. */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}
