// deno-lint-ignore-file no-console
/** Structured JSON-lines logger; the only module that writes to the console. */
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

const RANK: Record<LogLevel, number> = {
  debug: 10,
  info: 20,
  warn: 30,
  error: 40,
  silent: 100,
};

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(bindings: Record<string, unknown>): Logger;
}

function serialise(value: unknown): unknown {
  if (value instanceof Error) {
    const out: Record<string, unknown> = {
      name: value.name,
      message: value.message,
      stack: value.stack,
    };
    if (value.cause !== undefined) out.cause = serialise(value.cause);
    return out;
  }
  return value;
}

export function createLogger(
  level: LogLevel = "info",
  bindings: Record<string, unknown> = {},
): Logger {
  const min = RANK[level];
  function write(lvl: LogLevel, msg: string, fields?: Record<string, unknown>) {
    if (RANK[lvl] < min) return;
    const line: Record<string, unknown> = {
      time: new Date().toISOString(),
      level: lvl,
      msg,
      ...bindings,
    };
    for (const [k, v] of Object.entries(fields ?? {})) line[k] = serialise(v);
    const text = JSON.stringify(line);
    if (lvl === "error" || lvl === "warn") console.error(text);
    else console.log(text);
  }
  return {
    debug: (m, f) => write("debug", m, f),
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
    child: (b) => createLogger(level, { ...bindings, ...b }),
  };
}

/** Prints plain text for CLI commands (their output is the product, not a log). */
export function printOut(text: string): void {
  console.log(text);
}

export function printErr(text: string): void {
  console.error(text);
}
