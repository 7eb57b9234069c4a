import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { identityV1 } from "@c402/contracts";
import { actorOfRequest } from "@c402/account-events";
import type { ServiceImplementation } from "@c402/rpc";
import type { Passes, PassScope } from "../domain/passes";

/** The RPCs of gated-content passes; identity-rpc.ts serves the rest of IdentityService. */
export type PassMethods = Pick<ServiceImplementation<typeof identityV1.IdentityService>, "issuePass" | "checkPass" | "returnPassUse">;

const SCOPES: Record<PassScope, identityV1.PassScope> = { seller: identityV1.PassScope.SELLER, content: identityV1.PassScope.CONTENT };

export function passRpc(passes: Passes): PassMethods {
  return {
    async issuePass(req) {
      const r = await passes.issue({
        accountId: req.accountId,
        scope: req.scope === identityV1.PassScope.CONTENT ? "content" : "seller",
        ...(req.contentId !== undefined ? { contentId: req.contentId } : {}),
        subject: req.subject,
        // Required by the contract (protovalidate): absent never reaches here.
        expiresAt: req.expiresAt ? timestampDate(req.expiresAt) : new Date(0),
        ...(req.uses !== undefined ? { uses: req.uses } : {}),
        rehearsal: req.rehearsal,
        ...(req.actor !== undefined ? { actor: actorOfRequest(req.actor) } : {}),
      });
      return { pass: r.pass, scope: SCOPES[r.scope], expiresAt: timestampFromDate(r.expiresAt) };
    },
    async returnPassUse(req) {
      return { returned: await passes.giveBack(req.pass, req.accountId) };
    },
    async checkPass(req) {
      const r = await passes.check(req.pass, { accountId: req.accountId, contentId: req.contentId, rehearsalFace: req.rehearsalFace });
      return {
        valid: r.valid,
        reason: r.valid ? "" : r.reason,
        ...(r.valid && r.usesLeft !== undefined ? { usesLeft: r.usesLeft } : {}),
        ...(r.expiresAt ? { expiresAt: timestampFromDate(r.expiresAt) } : {}),
      };
    },
  };
}
