import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { contentGrantsV1 } from "@c402/contracts";
import { actorOfRequest } from "@c402/account-events";
import type { ServiceImplementation } from "@c402/rpc";
import type { Passes, PassScope } from "../domain/passes";

const SCOPES: Record<PassScope, contentGrantsV1.PassScope> = { seller: contentGrantsV1.PassScope.SELLER, content: contentGrantsV1.PassScope.CONTENT };

/** Thin handlers: the rules are the domain's (domain/passes.ts). */
export function contentGrantsRpc(passes: Passes): ServiceImplementation<typeof contentGrantsV1.ContentGrantsService> {
  return {
    async issuePass(req) {
      const r = await passes.issue({
        accountId: req.accountId,
        scope: req.scope === contentGrantsV1.PassScope.CONTENT ? "content" : "seller",
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
