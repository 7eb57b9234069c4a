import { identityV1 } from "@c402/contracts";
import { isoOrNull } from "./values";

/** The public JSON shape of the seller profile (GET and PATCH /auth/me). */

const PROFILE_TYPE_NAMES: Partial<Record<identityV1.ProfileType, string>> = {
  [identityV1.ProfileType.INDIVIDUAL]: "individual",
  [identityV1.ProfileType.TEAM]: "team",
  [identityV1.ProfileType.COMPANY]: "company",
};

export function profileView(p: identityV1.Profile) {
  return {
    object: "profile",
    account_id: p.accountId,
    slug: p.slug ?? null,
    name: p.name ?? null,
    profile_type: PROFILE_TYPE_NAMES[p.profileType] ?? null,
    bio: p.bio ?? null,
    avatar_url: p.avatarUrl ?? null,
    website_url: p.websiteUrl ?? null,
    social_links: { ...(p.socialLinks?.links ?? {}) },
    verified: p.verified,
    created_at: isoOrNull(p.createdAt),
    updated_at: isoOrNull(p.updatedAt),
  };
}
