// What the docs test reads in Markdown: headings and their GitHub anchors,
// relative links, the shell blocks marked runnable, a table between markers.

/** The marker (alone on its line, before a ```sh block) that makes a block runnable. */
export const RUNNABLE = "<!-- runnable -->";

/** The text with fenced code blocks blanked (line count kept), so nothing inside them counts. */
function withoutCodeBlocks(text: string): string {
  let fence: string | undefined;
  return text.split("\n").map((line) => {
    const open = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (open && open[0] === fence[0] && open.length >= fence.length) {
        fence = undefined;
      }
      return "";
    }
    if (open) {
      fence = open;
      return "";
    }
    return line;
  }).join("\n");
}

/**
 * GitHub's anchor for a heading (github-slugger): the rendered text in lower
 * case, every character but letters, marks, digits, `_`, `-` and spaces
 * dropped, spaces turned into `-`.
 */
export function slug(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1") // links and images: their text
    .replace(/<[^>]+>/g, "") // inline HTML
    .replace(/[`*]/g, ""); // code and emphasis marks
  return rendered.trim().toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "")
    .replace(/ /g, "-");
}

/** Every anchor the page's headings make, with GitHub's -1, -2 suffixes for repeats. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of withoutCodeBlocks(text).split("\n")) {
    const heading = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

export interface Link {
  target: string;
  line: number;
}

/** Markdown links and images, and HTML src/href, outside code; absolute URLs left out. */
export function relativeLinks(text: string): Link[] {
  const links: Link[] = [];
  withoutCodeBlocks(text).split("\n").forEach((raw, i) => {
    const line = raw.replace(/`[^`]*`/g, "");
    const found = [
      ...[...line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) =>
        m[1]!
      ),
      ...[...line.matchAll(/\b(?:src|href)="([^"]+)"/g)].map((m) => m[1]!),
    ];
    for (const target of found) {
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) {
        links.push({ target, line: i + 1 });
      }
    }
  });
  return links;
}

/** The ```sh blocks right after a RUNNABLE marker, in page order, verbatim. */
export function runnableBlocks(text: string): string[] {
  const blocks: string[] = [];
  const pattern = /^<!-- runnable -->\n\n```sh\n([\s\S]*?)\n```$/gm;
  for (const m of text.matchAll(pattern)) blocks.push(m[1]!);
  return blocks;
}

/** How many RUNNABLE markers the page has (each must be followed by a ```sh block). */
export function runnableMarkers(text: string): number {
  return withoutCodeBlocks(text).split("\n").filter((line) =>
    line.trim() === RUNNABLE
  ).length;
}

/** The rows of the table between `<!-- name:start -->` and `<!-- name:end -->`, as cells. */
export function tableBetween(text: string, name: string): string[][] {
  const start = text.indexOf(`<!-- ${name}:start -->`);
  const end = text.indexOf(`<!-- ${name}:end -->`);
  if (start < 0 || end < start) {
    throw new Error(`no <!-- ${name}:start --> ... <!-- ${name}:end --> table`);
  }
  return text.slice(start, end).split("\n")
    .filter((line) => line.startsWith("|") && !/^\|\s*-/.test(line))
    .slice(1) // the header row
    .map((line) => line.split("|").slice(1, -1).map((c) => c.trim()));
}
