import type { identityV1 } from "@c402/contracts";
import { actorOfRequest } from "@c402/account-events";
import type { ServiceImplementation } from "@c402/rpc";
import type { EmbedSettings } from "../domain/embed";

/** The RPCs of the embed settings; identity-rpc.ts serves the rest of IdentityService. */
export type EmbedMethods = Pick<ServiceImplementation<typeof identityV1.IdentityService>, "getEmbedSettings" | "putEmbedSettings">;

export function embedRpc(embeds: EmbedSettings): EmbedMethods {
  return {
    async getEmbedSettings(req) {
      return { embedOrigins: await embeds.get(req.accountId) };
    },
    async putEmbedSettings(req) {
      const r = await embeds.put(req.accountId, req.embedOrigins, actorOfRequest(req.actor));
      return { embedOrigins: r.embedOrigins, changed: r.changed };
    },
  };
}
