import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { identityV1 } from "@c402/contracts";
import type { ServiceImplementation } from "@c402/rpc";
import type { MagicLinks } from "../domain/magic-link";

/** The RPCs of magic-link sign-in; identity-rpc.ts serves the rest of IdentityService. */
export type MagicLinkMethods = Pick<ServiceImplementation<typeof identityV1.IdentityService>, "requestMagicLink" | "verifyMagicLink">;

export function magicLinkRpc(magicLinks: MagicLinks): MagicLinkMethods {
  return {
    async requestMagicLink(req) {
      const r = await magicLinks.request({ email: req.email, returnTo: req.returnTo });
      return { email: r.email, expiresAt: timestampFromDate(r.expiresAt), expiresInSeconds: r.expiresInSeconds };
    },
    async verifyMagicLink(req) {
      const r = await magicLinks.verify(req.token);
      return {
        account: { id: r.accountId, createdAt: timestampFromDate(r.accountCreatedAt) },
        accountCreated: r.accountCreated,
        session: { token: r.session.token, expiresAt: timestampFromDate(r.session.expiresAt) },
        ...(r.returnTo !== null ? { returnTo: r.returnTo } : {}),
      };
    },
  };
}
