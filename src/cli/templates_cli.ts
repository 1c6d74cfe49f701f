import type { Container } from "../container.ts";
import { UsageError } from "./args.ts";

/** `templates create|update` (filled in with the templates domain). */
export function templatesCommand(
  _c: Container,
  _args: string[],
): Promise<void> {
  return Promise.reject(new UsageError("Usage: templates create|update"));
}

/** Two approved demo templates for the dev account (filled in with the templates domain). */
export async function seedDemoTemplates(
  _c: Container,
  _accountId: string,
  _channelId: string,
): Promise<void> {}
