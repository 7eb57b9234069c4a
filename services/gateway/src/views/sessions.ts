import type { identityV1 } from "@c402/contracts";
import { isoOrNull } from "./values";

/** The answer to a logout: the session and when it stopped being accepted. */
export function endedSessionView(r: identityV1.EndSessionResponse) {
  return { object: "session", ended: true, ended_at: isoOrNull(r.endedAt) };
}
