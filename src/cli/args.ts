import { parseArgs } from "node:util";
import { AppError } from "../errors.ts";
import { NUL, NUL_PROBLEM } from "../text.ts";
import { UsageError } from "./usage_error.ts";

export type Flags = Record<string, string | boolean | undefined>;

/**
 * Parses `--name value` and `--flag` options; unknown options are an error,
 * and so is a value holding a NUL (what it names would be stored cut:
 * src/text.ts).
 */
export function parseFlags(
  args: string[],
  spec: Record<string, "string" | "boolean">,
): Flags {
  const options: Record<string, { type: "string" | "boolean" }> = {
    json: { type: "boolean" },
  };
  for (const [name, type] of Object.entries(spec)) options[name] = { type };
  const { values } = parseArgs({ args, options, strict: true });
  for (const [name, value] of Object.entries(values)) {
    if (typeof value === "string" && value.includes(NUL)) {
      throw new AppError(
        "VALIDATION_ERROR",
        `Invalid option --${name}: ${NUL_PROBLEM}`,
      );
    }
  }
  return values as Flags;
}

export { UsageError } from "./usage_error.ts";

export function required(flags: Flags, name: string): string {
  const v = flags[name];
  if (typeof v !== "string" || v === "") {
    throw new UsageError(`Missing required option --${name}`);
  }
  return v;
}

export function optional(flags: Flags, name: string): string | undefined {
  const v = flags[name];
  return typeof v === "string" ? v : undefined;
}

/** Commands that name a row by `--id` or by other options (`--account` and `--name`, say). */
export function requireIdOr(flags: Flags, instead: string[]): void {
  if (optional(flags, "id") || instead.every((n) => optional(flags, n))) {
    return;
  }
  throw new UsageError(
    `Give --id, or ${instead.map((n) => `--${n}`).join(" and ")}`,
  );
}
