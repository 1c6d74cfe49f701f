// One connected Instagram account with a stored post and a fresh comments
// cache, so every /social route answers from the database (no upstream call).
import type { Harness, Tenant } from "../_harness.ts";
import { connectSocialAccount } from "../../src/domain/social/social_service.ts";
import {
  upsertPost,
  writeCommentCache,
} from "../../src/domain/social/social_post_repo.ts";
import { blankMetrics } from "../../src/domain/social/social.ts";
import { toDbTime } from "../../src/db/time.ts";

let counter = 0;

export async function seedSocial(
  h: Harness,
  tenant: Tenant,
): Promise<{ socialAccountId: string; socialPostId: string }> {
  const n = String(++counter).padStart(6, "0");
  const social = await connectSocialAccount(h.container, {
    accountId: tenant.account.id,
    network: "instagram",
    upstreamId: `17841499${n}`,
    username: `shop_${n}`,
    accessToken: `token-${n}`,
  });
  const at = toDbTime(h.clock.now());
  const postId = `17999${n}`;
  await upsertPost(h.container.db, {
    social_account_id: social.id,
    id: postId,
    account_id: tenant.account.id,
    network: "instagram",
    type: "image",
    permalink: `https://www.instagram.com/p/${postId}/`,
    caption: "A post",
    media_url: null,
    thumbnail_url: null,
    published_at: at,
    expires_at: null,
    metrics: JSON.stringify({ ...blankMetrics("image"), likes: 3 }),
    metrics_updated_at: at,
    created_at: at,
    updated_at: at,
  });
  await writeCommentCache(h.container.db, {
    socialAccountId: social.id,
    postId,
  }, {
    fetchedLimit: 300,
    body: JSON.stringify({ total: 0, comments: [] }),
    at,
  });
  return { socialAccountId: social.id, socialPostId: postId };
}
