/**
 * The commands that talk to Meta: `channels connect`, `templates sync` and
 * `doctor` (issue 28). Secrets given as `-` are read from standard input
 * (so they stay out of the process list); a failure names Meta's error code.
 */
import type { Container } from "../container.ts";
import { printOut } from "../log.ts";
import { AppError } from "../errors.ts";
import { requireAccount } from "../domain/accounts/account_service.ts";
import { connectWaba } from "../domain/channels/connect_service.ts";
import { runDoctor } from "../domain/channels/doctor_service.ts";
import {
  type SyncSummary,
  syncWabaTemplates,
} from "../domain/templates/template_sync_service.ts";
import { describeMetaError } from "../domain/wabas/waba_call_service.ts";
import { listAccountWabas } from "../domain/wabas/waba_repo.ts";
import { type Flags, optional, parseFlags, required } from "./args.ts";

function emit(flags: Flags, value: unknown, text: string): void {
  printOut(flags.json ? JSON.stringify(value, null, 2) : text);
}

/** Standard input, read once: its lines, for the options given as `-`. */
async function stdinLines(): Promise<string[]> {
  const text = await new Response(Deno.stdin.readable).text();
  return text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== "");
}

/**
 * The values of secret options, each `-` read from standard input, one line
 * per option in the order given here (`--access-token -` then `--pin -`).
 */
async function secrets(
  flags: Flags,
  names: string[],
): Promise<Record<string, string | undefined>> {
  const out: Record<string, string | undefined> = {};
  const fromStdin = names.filter((n) => optional(flags, n) === "-");
  const lines = fromStdin.length ? await stdinLines() : [];
  for (const name of names) {
    const value = optional(flags, name);
    if (value !== "-") {
      out[name] = value;
      continue;
    }
    const line = lines.shift();
    if (!line) {
      throw new AppError(
        "VALIDATION_ERROR",
        `Cannot read --${name} from standard input: ${
          fromStdin.length > 1
            ? `give ${
              fromStdin.map((n) => `--${n}`).join(" and ")
            } one line each, in that order`
            : "it is empty"
        }`,
      );
    }
    out[name] = line;
  }
  return out;
}

/**
 * `channels connect --account S --waba-id W --access-token T|- [--phone-number-id P] [--pin N|-]`;
 * exit 1 when the app's webhook subscription could not be completed.
 */
export async function connectCommand(
  c: Container,
  args: string[],
): Promise<number> {
  const f = parseFlags(args, {
    account: "string",
    "waba-id": "string",
    "access-token": "string",
    "phone-number-id": "string",
    pin: "string",
  });
  const account = await requireAccount(c, required(f, "account"));
  const wabaId = required(f, "waba-id");
  required(f, "access-token");
  const given = await secrets(f, ["access-token", "pin"]);
  const result = await connectWaba(c, {
    accountId: account.id,
    wabaId,
    accessToken: given["access-token"]!,
    phoneNumberId: optional(f, "phone-number-id"),
    pin: given.pin,
  });
  const t = result.templates;
  emit(
    f,
    result,
    [
      `Connected WhatsApp Business Account ${wabaId}${
        result.wabaName ? ` (${result.wabaName})` : ""
      } to account ${account.slug}`,
      `  token: valid (${result.token.method})${
        result.token.unchecked.length
          ? `; not checked: ${
            result.token.unchecked.join(", ")
          } (set META_APP_ID)`
          : ""
      }`,
      ...result.channels.map((ch) =>
        `  channel ${ch.phoneNumber} ${ch.id}: ${ch.status}, ${
          ch.created ? "created" : ch.changed ? "updated" : "unchanged"
        }${
          ch.registered === "not_asked"
            ? ""
            : `, ${
              ch.registered === "registered"
                ? "registered"
                : "already registered"
            }`
        }`
      ),
      `  app subscribed to the WABA: ${result.subscribed}`,
      `  app webhook: ${result.webhook.status}${
        result.webhook.reason ? ` (${result.webhook.reason})` : ""
      }${
        result.webhook.missing.length
          ? `; fields ${
            result.webhook.status === "updated" ? "added" : "missing"
          }: ${result.webhook.missing.join(", ")}`
          : ""
      }`,
      `  templates: ${t.templates} synced (${t.approved} approved; ${t.created} new, ${t.updated} changed, ${t.disabled} disabled)`,
    ].join("\n"),
  );
  return result.webhook.status === "failed" ? 1 : 0;
}

/** `templates sync --account S [--waba-id W]`: every WABA of the account, all or nothing each. */
export async function templatesSyncCommand(c: Container, args: string[]) {
  const f = parseFlags(args, { account: "string", "waba-id": "string" });
  const account = await requireAccount(c, required(f, "account"));
  const only = optional(f, "waba-id");
  const wabas = (await listAccountWabas(c.db, account.id))
    .filter((w) => !only || w.id === only);
  if (wabas.length === 0) {
    throw new AppError(
      "NOT_FOUND",
      only
        ? `Cannot sync templates: WhatsApp Business Account "${only}" is not connected to account "${account.slug}"`
        : `Cannot sync templates: account "${account.slug}" has no WhatsApp Business Account; run channels connect`,
    );
  }
  const synced: SyncSummary[] = [];
  const failed: { wabaId: string; error: string }[] = [];
  for (const waba of wabas) {
    try {
      synced.push(await syncWabaTemplates(c, waba.id, { mode: "live" }));
    } catch (err) {
      failed.push({ wabaId: waba.id, error: describeMetaError(err) });
    }
  }
  const lines = synced.map((s) =>
    `WABA ${s.wabaId}: ${s.templates} templates in ${s.pages} page(s), ${s.approved} approved; ${s.created} new, ${s.updated} changed, ${s.disabled} disabled`
  );
  if (failed.length) {
    if (f.json) printOut(JSON.stringify({ synced, failed }, null, 2));
    else if (lines.length) printOut(lines.join("\n"));
    throw new AppError(
      "UPSTREAM_ERROR",
      failed.map((x) =>
        `Cannot sync templates of WABA ${x.wabaId} (nothing changed): ${x.error}`
      ).join("\n"),
    );
  }
  emit(f, { synced, failed }, lines.join("\n"));
}

/** `doctor --account S`: one line per check; exit 1 when one that blocks sending or receiving fails. */
export async function doctorCommand(
  c: Container,
  args: string[],
): Promise<number> {
  const f = parseFlags(args, { account: "string" });
  const account = await requireAccount(c, required(f, "account"));
  const report = await runDoctor(c, account.id);
  emit(
    f,
    {
      checks: report.checks.map(({ name, ok, detail, fix, blocking }) => ({
        name,
        ok,
        detail,
        fix,
        blocking,
      })),
    },
    report.checks.map((x) =>
      `${x.ok ? "ok  " : x.blocking ? "FAIL" : "warn"} ${x.name}: ${x.detail}${
        x.fix ? `\n     fix: ${x.fix}` : ""
      }`
    ).join("\n"),
  );
  return report.blocking ? 1 : 0;
}
