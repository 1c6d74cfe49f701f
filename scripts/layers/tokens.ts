/**
 * A small TypeScript tokenizer for the layer check: just enough to find
 * imports and SQL in real code, never in comments or strings. It knows
 * comments, strings, template literals (with nested `${}`), regular
 * expression literals and numbers; everything else is an identifier or a
 * one-character punctuator.
 */

export type Token =
  | { kind: "id"; text: string; line: number }
  | { kind: "str"; text: string; line: number }
  /** A template literal; `text` is set when it has no `${}` substitution. */
  | { kind: "tpl"; text: string | null; line: number }
  | { kind: "punct"; text: string; line: number }
  | { kind: "other"; text: string; line: number };

const ID_START = /[\p{ID_Start}$_]/u;
const ID_PART = /[\p{ID_Continue}$\u200c\u200d]/u;

/** Keywords after which a `/` starts a regular expression, not a division. */
const REGEX_AFTER_KEYWORD = new Set([
  "return",
  "typeof",
  "instanceof",
  "in",
  "of",
  "new",
  "delete",
  "void",
  "throw",
  "case",
  "do",
  "else",
  "yield",
  "await",
]);

/** Splits TypeScript source into tokens, dropping comments and whitespace. */
export function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  // One entry per open `{`: true when it opened a template's `${`.
  const braces: boolean[] = [];
  let i = source.startsWith("#!") ? source.indexOf("\n") : 0;
  if (i < 0) i = source.length;
  let line = 1 + countLines(source, 0, i);

  const push = (token: Token) => tokens.push(token);

  // Reads a template from just after "`" or "}" to its end or next "${".
  const readTemplate = (from: number, head: boolean): number => {
    let j = from;
    let text = "";
    while (j < source.length) {
      const c = source[j]!;
      if (c === "\\") {
        text += source[j + 1] ?? "";
        j += 2;
      } else if (c === "`") {
        if (head) push({ kind: "tpl", text, line });
        line += countLines(source, from, j);
        return j + 1;
      } else if (c === "$" && source[j + 1] === "{") {
        if (head) push({ kind: "tpl", text: null, line });
        braces.push(true);
        line += countLines(source, from, j);
        return j + 2;
      } else {
        text += c;
        j++;
      }
    }
    throw new SyntaxError(`Unterminated template literal at line ${line}`);
  };

  while (i < source.length) {
    const c = source[i]!;
    if (c === "\n") {
      line++;
      i++;
    } else if (c === " " || c === "\t" || c === "\r" || c === "\uFEFF") {
      i++;
    } else if (c === "/" && source[i + 1] === "/") {
      const end = source.indexOf("\n", i);
      i = end < 0 ? source.length : end;
    } else if (c === "/" && source[i + 1] === "*") {
      const end = source.indexOf("*/", i + 2);
      if (end < 0) throw new SyntaxError(`Unterminated comment at ${line}`);
      line += countLines(source, i, end);
      i = end + 2;
    } else if (c === "'" || c === '"') {
      let j = i + 1;
      let text = "";
      while (j < source.length && source[j] !== c) {
        if (source[j] === "\n") break;
        if (source[j] === "\\") {
          text += source[j + 1] ?? "";
          j += 2;
        } else {
          text += source[j++];
        }
      }
      if (source[j] !== c) {
        throw new SyntaxError(`Unterminated string at line ${line}`);
      }
      push({ kind: "str", text, line });
      i = j + 1;
    } else if (c === "`") {
      i = readTemplate(i + 1, true);
    } else if (c === "}" && braces.at(-1) === true) {
      braces.pop();
      i = readTemplate(i + 1, false);
    } else if (c === "/" && startsRegex(tokens.at(-1), tokens.at(-2))) {
      i = skipRegex(source, i, line);
      push({ kind: "other", text: "regex", line });
    } else if (ID_START.test(c) || c === "\\") {
      let j = i + 1;
      while (j < source.length && ID_PART.test(source[j]!)) j++;
      push({ kind: "id", text: source.slice(i, j), line });
      i = j;
    } else if (/[0-9]/.test(c) || (c === "." && /[0-9]/.test(source[i + 1]!))) {
      let j = i + 1;
      while (j < source.length && /[0-9A-Za-z_.]/.test(source[j]!)) j++;
      push({ kind: "other", text: source.slice(i, j), line });
      i = j;
    } else {
      if (c === "{") braces.push(false);
      if (c === "}") braces.pop();
      // `?.` is one token, so a member call reads the same with or without it.
      if (c === "?" && source[i + 1] === "." && !/[0-9]/.test(source[i + 2]!)) {
        push({ kind: "punct", text: ".", line });
        i += 2;
      } else {
        push({ kind: "punct", text: c, line });
        i++;
      }
    }
  }
  return tokens;
}

function countLines(source: string, from: number, to: number): number {
  let n = 0;
  for (let k = from; k < to; k++) if (source[k] === "\n") n++;
  return n;
}

/** Whether a `/` after these tokens starts a regular expression literal. */
function startsRegex(
  previous: Token | undefined,
  before: Token | undefined,
): boolean {
  if (!previous) return true;
  if (previous.kind === "id") return REGEX_AFTER_KEYWORD.has(previous.text);
  if (previous.kind !== "punct") return false;
  // `i++ / 2`: a postfix increment or decrement ends an expression.
  const postfix = "+-".includes(previous.text) &&
    before?.kind === "punct" && before.text === previous.text;
  return !")]}".includes(previous.text) && !postfix;
}

function skipRegex(source: string, start: number, line: number): number {
  let j = start + 1;
  let inClass = false;
  while (j < source.length) {
    const c = source[j]!;
    if (c === "\n") break;
    if (c === "\\") {
      j += 2;
      continue;
    }
    if (c === "[") inClass = true;
    else if (c === "]") inClass = false;
    else if (c === "/" && !inClass) {
      j++;
      while (j < source.length && /[a-z]/i.test(source[j]!)) j++;
      return j;
    }
    j++;
  }
  throw new SyntaxError(`Unterminated regular expression at line ${line}`);
}
