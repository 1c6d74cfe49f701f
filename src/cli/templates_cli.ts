import type { Container } from "../container.ts";
import { printOut } from "../log.ts";
import { requireAccount } from "../domain/accounts/account_service.ts";
import {
  isTemplateCategory,
  isTemplateStatus,
  TEMPLATE_CATEGORIES,
  TEMPLATE_STATUSES,
  type TemplateCategory,
  type TemplateStatus,
} from "../domain/templates/template.ts";
import {
  createTemplate,
  getTemplateByName,
  updateTemplateStatus,
} from "../domain/templates/template_service.ts";
import {
  type Flags,
  optional,
  parseFlags,
  required,
  requireIdOr,
  UsageError,
} from "./args.ts";

function emit(flags: Flags, value: unknown, text: string): void {
  printOut(flags.json ? JSON.stringify(value, null, 2) : text);
}

function status(value: string): TemplateStatus {
  if (!isTemplateStatus(value)) {
    throw new UsageError(
      `--status must be one of ${TEMPLATE_STATUSES.join(", ")}`,
    );
  }
  return value;
}

function category(value: string): TemplateCategory {
  if (!isTemplateCategory(value)) {
    throw new UsageError(
      `--category must be one of ${TEMPLATE_CATEGORIES.join(", ")}`,
    );
  }
  return value;
}

function components(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(
      `--components must be a JSON array, e.g. '[{"type":"BODY","text":"Hi {{1}}"}]'`,
    );
  }
}

/** `templates create|update`: templates are managed here, not through the public API. */
export async function templatesCommand(
  c: Container,
  args: string[],
): Promise<void> {
  const [sub, ...rest] = args;
  if (sub === "create") {
    const f = parseFlags(rest, {
      account: "string",
      name: "string",
      language: "string",
      category: "string",
      status: "string",
      components: "string",
      channel: "string",
      "meta-template-id": "string",
    });
    const input = {
      name: required(f, "name"),
      language: required(f, "language"),
      category: category(required(f, "category")),
      status: status(required(f, "status")),
      components: components(required(f, "components")),
      channelId: optional(f, "channel") ?? null,
      metaTemplateId: optional(f, "meta-template-id") ?? null,
    };
    const account = await requireAccount(c, required(f, "account"));
    const template = await createTemplate(c, {
      accountId: account.id,
      ...input,
    });
    emit(
      f,
      template,
      `Created template ${template.name} (${template.language}, ${template.status}) ${template.id}`,
    );
  } else if (sub === "update") {
    const f = parseFlags(rest, {
      id: "string",
      account: "string",
      name: "string",
      language: "string",
      status: "string",
    });
    requireIdOr(f, ["account", "name"]);
    const id = optional(f, "id") ?? await templateNamed(c, f);
    const template = await updateTemplateStatus(
      c,
      id,
      status(required(f, "status")),
    );
    emit(
      f,
      template,
      `Updated template ${template.name} (${template.language}) to ${template.status}`,
    );
  } else if (sub === "sync") {
    await (await import("./meta_cli.ts")).templatesSyncCommand(c, rest);
  } else {
    throw new UsageError("Usage: templates create|update|sync");
  }
}

/** The account's template named `--name` (newest; in `--language` when given). */
async function templateNamed(c: Container, f: Flags): Promise<string> {
  const account = await requireAccount(c, required(f, "account"));
  const template = await getTemplateByName(c, {
    accountId: account.id,
    name: required(f, "name"),
    language: optional(f, "language"),
  });
  return template.id;
}
