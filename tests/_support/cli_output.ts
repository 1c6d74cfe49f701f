// deno-lint-ignore-file no-console
import type { Container } from "../../src/container.ts";

/** Runs an admin command in-process and returns what it printed. */
export async function runCommand(
  command: (c: Container, args: string[]) => Promise<void>,
  container: Container,
  args: string[],
): Promise<string> {
  const lines: string[] = [];
  const original = console.log;
  console.log = (text: string) => lines.push(text);
  try {
    await command(container, args);
  } finally {
    console.log = original;
  }
  return lines.join("\n");
}
