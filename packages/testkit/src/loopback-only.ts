import { isIP } from "node:net";
import { installConnectSpy, isLoopbackIp } from "./outbound-lab/connect-spy";

/**
 * Target G20 for every suite (jest's setupFilesAfterEnv): each test file ends
 * by checking that no connection it made, whatever the library, tried an
 * address outside 127.0.0.0/8 and ::1. Processes a test starts are watched by
 * bin/loopback-witness.cjs instead.
 */
const spy = installConnectSpy();

afterAll(() => {
  // A unix socket's path is local by nature: only IP addresses can leave the machine.
  expect(spy.attempts().filter((ip) => isIP(ip) !== 0 && !isLoopbackIp(ip))).toEqual([]);
});
