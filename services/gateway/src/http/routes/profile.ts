import { identityV1 } from "@c402/contracts";
import { answered } from "@c402/rpc";
import { Router } from "express";
import { profileView } from "../../views/profile";
import { credentialOf, requireScope } from "../auth";
import type { GatewayDeps } from "../deps";
import type { BodyOf } from "../request-schemas";
import { validateBody } from "../validate";

/**
 * /auth/me: the seller's profile. GET takes any seller credential (scope
 * read_only); PATCH changes account settings, which the spec's scope table
 * keeps to `full`. The body's shape is checked here (ProfilePatch); the
 * profile rules and the slug's uniqueness are identity's.
 */

/** Fields of the profile record a client cannot set, each refused by name rather than as unknown. */
const READ_ONLY: Record<string, string> = {
  verified: "is read-only: verification is never self-serve",
  object: "is read-only",
  account_id: "is read-only",
  created_at: "is read-only",
  updated_at: "is read-only",
};

/** The body as ProfilePatch, with each read-only field sent refused by name (422). */
function profilePatchOf(raw: unknown): BodyOf<"ProfilePatch"> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return validateBody("ProfilePatch", raw);
  const sent = Object.keys(raw);
  const errors = sent.filter((k) => Object.hasOwn(READ_ONLY, k)).map((field) => ({ field, reason: READ_ONLY[field] ?? "is read-only" }));
  return validateBody("ProfilePatch", Object.fromEntries(Object.entries(raw).filter(([k]) => !Object.hasOwn(READ_ONLY, k))), errors);
}

const TEXT_FIELDS = [
  ["slug", "slug"],
  ["name", "name"],
  ["bio", "bio"],
  ["avatar_url", "avatarUrl"],
  ["website_url", "websiteUrl"],
] as const;

const PROFILE_TYPES = {
  individual: identityV1.ProfileType.INDIVIDUAL,
  team: identityV1.ProfileType.TEAM,
  company: identityV1.ProfileType.COMPANY,
} as const;

/** The JSON patch as identity's: a value sets, "" clears (named in `clear`), null or absent keeps. */
function updateOf(body: BodyOf<"ProfilePatch">) {
  const set: Partial<Record<(typeof TEXT_FIELDS)[number][1], string>> = {};
  const clear: string[] = [];
  for (const [field, key] of TEXT_FIELDS) {
    const value = body[field];
    if (value === "") clear.push(field);
    else if (typeof value === "string") set[key] = value;
  }
  const type = body.profile_type;
  if (type === "") clear.push("profile_type");
  return {
    ...set,
    ...(type ? { profileType: PROFILE_TYPES[type] } : {}),
    ...(body.social_links ? { socialLinks: { links: body.social_links } } : {}),
    clear,
  };
}

export function profileRoutes({ clients }: GatewayDeps): Router {
  const router = Router();

  router.get("/auth/me", requireScope(clients, "read_only"), async (req, res) => {
    const r = await clients.identity.getProfile({ accountId: credentialOf(req).accountId });
    res.json(profileView(answered(r.profile, "profile")));
  });

  router.patch("/auth/me", requireScope(clients, "full"), async (req, res) => {
    const body = profilePatchOf(req.body);
    const cred = credentialOf(req);
    const r = await clients.identity.updateProfile({ accountId: cred.accountId, ...updateOf(body), actor: cred.actor });
    res.json(profileView(answered(r.profile, "profile")));
  });

  return router;
}
