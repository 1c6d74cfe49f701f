// WhatsApp's formatting (*bold*, _italic_, ~strike~, `code`, ```monospace```)
// and links, rendered as DOM nodes: text is only ever text, never HTML, and
// a link is made only for http(s), opening without referrer or opener.
import type { ComponentChildren } from "preact";
import { blocksOf, partsOf } from "./marks.ts";

const LINK = /\bhttps?:\/\/[^\s<>"'`]+[^\s<>"'`.,;:!?)\]]/gi;

function links(text: string): ComponentChildren[] {
  const out: ComponentChildren[] = [];
  let last = 0;
  for (const match of text.matchAll(LINK)) {
    const url = match[0];
    const at = match.index ?? 0;
    if (at > last) out.push(text.slice(last, at));
    let safe: URL | undefined;
    try {
      safe = new URL(url);
    } catch { /* not a URL: text */ }
    out.push(
      safe && (safe.protocol === "https:" || safe.protocol === "http:")
        ? (
          <a href={safe.href} target="_blank" rel="noopener noreferrer">
            {url}
          </a>
        )
        : url,
    );
    last = at + url.length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

function inline(text: string): ComponentChildren[] {
  const out: ComponentChildren[] = [];
  for (const p of partsOf(text)) {
    if ("text" in p) out.push(...links(p.text));
    else if (p.mark === "*") out.push(<strong>{inline(p.inner)}</strong>);
    else if (p.mark === "_") out.push(<em>{inline(p.inner)}</em>);
    else if (p.mark === "~") out.push(<s>{inline(p.inner)}</s>);
    else out.push(<code>{p.inner}</code>);
  }
  return out;
}

/** The nodes of a WhatsApp text. */
export function Formatted({ text }: { text: string }) {
  return (
    <>
      {blocksOf(text).map((block, i) =>
        i % 2 === 1 ? <pre key={i}>{block}</pre> : inline(block)
      )}
    </>
  );
}
