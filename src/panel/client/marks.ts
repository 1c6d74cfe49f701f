// WhatsApp's text markers (*bold*, _italic_, ~strike~, `code`, ```monospace```):
// where they are, for format.tsx to render and for one-line previews to drop.

/** Splits a line into marked parts (kept, as capture groups) and the rest. */
export const INLINE = /(\*[^*\n]+\*|_[^_\n]+_|~[^~\n]+~|`[^`\n]+`)/;

/** The marker a part of INLINE's split is wrapped in, if it is one. */
export function markOf(part: string): "*" | "_" | "~" | "`" | undefined {
  const mark = part[0];
  return part.length > 2 && part.endsWith(mark ?? "") &&
      (mark === "*" || mark === "_" || mark === "~" || mark === "`")
    ? mark
    : undefined;
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
  return text.split(INLINE).map((part) => {
    const mark = markOf(part);
    if (!mark) return part;
    return mark === "`" ? part.slice(1, -1) : plainInline(part.slice(1, -1));
  }).join("");
}

/** A WhatsApp text without its markers, as one line (the list's previews). */
export function plainText(text: string): string {
  return blocksOf(text).map((block, i) =>
    i % 2 === 1 ? block : plainInline(block)
  )
    .join("").replace(/\s+/g, " ").trim();
}
