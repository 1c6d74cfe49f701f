// WhatsApp's text markers (*bold*, _italic_, ~strike~, `code`, ```monospace```):
// where they are, for format.tsx to render and for one-line previews to drop.

/**
 * A marked part: `*`, `_`, `~` or `` ` `` around text. As in WhatsApp, a
 * marker pairs only at word edges (`snake_case_name` and `2*3*4` stay text)
 * and around text that neither starts nor ends with a space.
 */
const INLINE =
  /(?<![\p{L}\p{N}])(\*[^*\s](?:[^*\n]*[^*\s])?\*|_[^_\s](?:[^_\n]*[^_\s])?_|~[^~\s](?:[^~\n]*[^~\s])?~|`[^`\n]+`)(?![\p{L}\p{N}])/u;

export type Mark = "*" | "_" | "~" | "`";

/** A line as text and marked parts, in order (`inner` without the markers). */
export type Part = { text: string } | { mark: Mark; inner: string };

export function partsOf(text: string): Part[] {
  // split() keeps the captured (marked) parts at the odd indexes.
  return text.split(INLINE).flatMap((part, i): Part[] =>
    i % 2 === 1
      ? [{ mark: part[0] as Mark, inner: part.slice(1, -1) }]
      : part
      ? [{ text: part }]
      : []
  );
}

/** A text's ``` blocks (odd indexes) and the text around them (even). */
export function blocksOf(text: string): string[] {
  const blocks = text.split("```");
  // An unclosed ``` is text.
  if (blocks.length % 2 === 0) {
    const tail = blocks.pop()!;
    blocks[blocks.length - 1] += "```" + tail;
  }
  return blocks;
}

function plainInline(text: string): string {
  return partsOf(text).map((p) =>
    "text" in p ? p.text : p.mark === "`" ? p.inner : plainInline(p.inner)
  ).join("");
}

/** A WhatsApp text without its markers, as one line (the list's previews). */
export function plainText(text: string): string {
  return blocksOf(text).map((block, i) =>
    i % 2 === 1 ? block : plainInline(block)
  )
    .join("").replace(/\s+/g, " ").trim();
}
