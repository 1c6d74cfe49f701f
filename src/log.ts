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
  return new JsonLogger(RANK[level], bindings);
}

/**
 * Methods on the prototype: the HTTP layer makes two children per request
 * (request id, then account), so a child is one object, not six closures.
 */
class JsonLogger implements Logger {
  readonly #min: number;
  readonly #bindings: Record<string, unknown>;

  constructor(min: number, bindings: Record<string, unknown>) {
    this.#min = min;
    this.#bindings = bindings;
  }

  debug(msg: string, fields?: Record<string, unknown>): void {
    if (RANK.debug >= this.#min) this.#write("debug", msg, fields);
  }
  info(msg: string, fields?: Record<string, unknown>): void {
    if (RANK.info >= this.#min) this.#write("info", msg, fields);
  }
  warn(msg: string, fields?: Record<string, unknown>): void {
    if (RANK.warn >= this.#min) this.#write("warn", msg, fields);
  }
  error(msg: string, fields?: Record<string, unknown>): void {
    if (RANK.error >= this.#min) this.#write("error", msg, fields);
  }
  child(bindings: Record<string, unknown>): Logger {
    return new JsonLogger(this.#min, {
      ...this.#bindings,
      ...bindings,
    });
  }

  #write(lvl: LogLevel, msg: string, fields?: Record<string, unknown>) {
    const line: Record<string, unknown> = {
      time: new Date().toISOString(),
      level: lvl,
      msg,
      ...this.#bindings,
    };
    for (const [k, v] of Object.entries(fields ?? {})) line[k] = serialise(v);
    const text = JSON.stringify(line);
    if (lvl === "error" || lvl === "warn") console.error(text);
    else console.log(text);
  }
}

/** Prints plain text for CLI commands (their output is the product, not a log). */
export function printOut(text: string): void {
  console.log(text);
}

export function printErr(text: string): void {
  console.error(text);
}
