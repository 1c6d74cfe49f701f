// One emoji as WhatsApp takes it in a reaction: a single user-perceived
// character that is an emoji, however many code points it spans.

/**
 * A fully-qualified emoji: flags, keycaps, tag sequences, ZWJ sequences, skin
 * tones. Built on first use: its Unicode sets cost milliseconds at start.
 */
let rgiEmojiRegexp: RegExp | undefined;

/**
 * Pictographs the RGI list misses: text-default ones without U+FE0F (`❤`)
 * and ZWJ sequences newer than the runtime's Unicode data. Joined by ZWJ
 * they stay one grapheme cluster (UAX #29, rule GB11).
 */
const PICTOGRAPH_REGEXP =
  /^\p{Extended_Pictographic}[\uFE0F\p{Emoji_Modifier}]*(?:\u200D\p{Extended_Pictographic}[\uFE0F\p{Emoji_Modifier}]*)*$/u;

/** True when `text` is exactly one emoji (never for the empty string). */
export function isOneEmoji(text: string): boolean {
  rgiEmojiRegexp ??= new RegExp("^\\p{RGI_Emoji}$", "v");
  return rgiEmojiRegexp.test(text) || PICTOGRAPH_REGEXP.test(text);
}
