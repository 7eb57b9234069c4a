import { originAuthTypeToProto, type fulfillmentV1 } from "@c402/contracts";
import type { ServiceClient } from "@c402/rpc";
import type { OriginRegistry } from "../domain/catalog";

/** The catalog's OriginRegistry over fulfillment's gRPC contract. */
export function originRegistry(fulfillment: ServiceClient<typeof fulfillmentV1.FulfillmentService>): OriginRegistry {
  return {
    async register({ accountId, checkoutId, origin }) {
      const auth = origin.auth;
      const r = await fulfillment.registerOrigin({
        accountId,
        checkoutId,
        originUrl: origin.url,
        ...(auth.kind === "none"
          ? {}
          : {
              auth: {
                source:
                  auth.kind === "origin_key"
                    ? { case: "originKeyId", value: auth.originKeyId }
                    : {
                        case: "oneOff",
                        value: {
                          authType: originAuthTypeToProto(auth.authType),
                          value: auth.value,
                          ...(auth.headerName !== undefined ? { headerName: auth.headerName } : {}),
                        },
                      },
              },
            }),
      });
      return r.originUrl;
    },
    async forget(checkoutId) {
      await fulfillment.forgetOrigin({ checkoutId });
    },
    async liabilities(checkoutId) {
      const l = await fulfillment.packageLiabilities({ checkoutId });
      return { liveKeys: l.liveKeys, callsUnspent: l.callsUnspent, unearnedAtomic: l.unearnedAtomic };
    },
  };
}
