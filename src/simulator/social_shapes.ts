/** Instagram media, Facebook post and comment objects as the Graph API writes them (reference §8). */
import type {
  SimComment,
  SimSocialAccount,
  SimSocialPost,
} from "./social_state.ts";
import type { SimulatorState } from "./state.ts";

/** Graph time: `2024-04-05T07:56:32+0000`. */
export function graphTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19) + "+0000";
}

const IG_MEDIA: Record<string, [string, string]> = {
  image: ["IMAGE", "FEED"],
  video: ["VIDEO", "FEED"],
  carousel: ["CAROUSEL_ALBUM", "FEED"],
  reel: ["VIDEO", "REELS"],
  story: ["IMAGE", "STORY"],
};
const FB_STATUS: Record<string, string> = {
  image: "added_photos",
  video: "added_video",
  link: "shared_story",
  text: "mobile_status_update",
};

export function postJson(
  state: SimulatorState,
  p: SimSocialPost,
  a: SimSocialAccount,
) {
  const media = `${state.url}/_social/${p.id}.jpg`;
  if (a.network === "instagram") {
    const [mediaType, product] = IG_MEDIA[p.type] ?? IG_MEDIA.image!;
    return {
      id: p.id,
      caption: p.caption,
      media_type: mediaType,
      media_product_type: product,
      permalink: `https://www.instagram.com/p/${p.id}/`,
      media_url: media,
      ...(mediaType === "VIDEO" ? { thumbnail_url: `${media}?thumb=1` } : {}),
      timestamp: graphTime(p.publishedAt),
      // Stories carry no like or comment counts; hidden likes leave the field out.
      ...(p.likes === null || p.type === "story"
        ? {}
        : { like_count: p.likes }),
      ...(p.type === "story" ? {} : { comments_count: p.commentsCount }),
      username: a.username,
    };
  }
  return {
    id: p.id,
    message: p.caption,
    created_time: graphTime(p.publishedAt),
    permalink_url: `https://www.facebook.com/${p.id}`,
    status_type: FB_STATUS[p.type] ?? "mobile_status_update",
    ...(p.type === "image" || p.type === "video"
      ? { full_picture: media }
      : {}),
    ...(p.shares > 0 ? { shares: { count: p.shares } } : {}),
    reactions: { data: [], summary: { total_count: p.likes ?? 0 } },
    comments: { data: [], summary: { total_count: p.commentsCount } },
  };
}

export function commentJson(
  a: SimSocialAccount,
  c: Omit<SimComment, "replies">,
) {
  return a.network === "instagram"
    ? {
      id: c.id,
      text: c.text,
      username: c.username,
      timestamp: graphTime(c.at),
      like_count: c.likeCount,
    }
    : {
      id: c.id,
      message: c.text,
      from: { id: "1", name: c.username },
      created_time: graphTime(c.at),
      like_count: c.likeCount,
    };
}
