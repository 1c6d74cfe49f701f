import { type Config, ConfigError, loadConfig, readEnv } from "../config.ts";
import { type Container, createContainer } from "../container.ts";
import { AppError } from "../errors.ts";
import { printErr, printOut } from "../log.ts";
import { migrateToLatest } from "../db/migrator.ts";
import { UsageError } from "./usage_error.ts";
import { devCommand, serveCommand } from "./serve.ts";

const USAGE = `Business Messaging server

Usage: main.ts <command> [options]   (every command but serve and dev accepts --json)

  serve                       run the server (default)
  dev                         run with embedded SQLite, the upstream simulator and a demo account
  migrate                     apply pending database migrations ({ applied } with --json)
  simulator [--port 9090] [--callback-url U] [--app-secret S]
                              run the upstream (Graph API) simulator on its own
  accounts create --name N --slug S [--plan crece] [--country AR]
  accounts list
  keys create --account S --scopes all|a,b [--rate-limit 120] [--name N]
  keys list --account S
  keys revoke --id ID | --account S --name N
  channels create --account S --phone +E164 --display-name N --upstream-phone-number-id ID
                  --waba-id ID --access-token T [--status connected|disconnected] [--send-rate 80]
  channels update --id ID | --account S --channel +E164  [same options as create]
  channels list --account S
  channels connect --account S --waba-id W --access-token T|- [--phone-number-id P] [--pin NNNNNN|-]
                  check the token, make a channel per number from Meta, subscribe the app,
                  register with --pin, sync the templates (\`-\` reads the value from stdin)
  templates create --account S --name N --language L --category C --status ST --components JSON [--channel ID]
  templates update --id ID | --account S --name N [--language L]  --status ST
  templates sync --account S [--waba-id W]
                  read every template of the account's WABAs from Meta (all or nothing per WABA)
  doctor --account S          check every prerequisite of sending and receiving (exit 1 when one blocks)
  agents create --account S --name N --visibility all|assigned
  agents list --account S
  agents revoke --id ID | --account S --name N
  agents login-link --id ID | --account S --name N
                              a one-time panel sign-in URL, valid 10 minutes ({ url } with --json)
  social connect --account S --network instagram|facebook --upstream-id ID --username U
                 --access-token T [--name N]
`;

/** An admin command; a number is its exit code (doctor's), nothing is 0. */
type Admin = (c: Container, args: string[]) => Promise<void | number>;

/** Each admin command's module is imported when it runs, so serve never loads them. */
const ADMIN: Record<string, () => Promise<Admin>> = {
  accounts: async () => (await import("./admin.ts")).accountsCommand,
  keys: async () => (await import("./admin.ts")).keysCommand,
  channels: async () => (await import("./admin.ts")).channelsCommand,
  templates: async () => (await import("./templates_cli.ts")).templatesCommand,
  agents: async () => (await import("./admin.ts")).agentsCommand,
  social: async () => (await import("./social_cli.ts")).socialCommand,
  doctor: async () => (await import("./meta_cli.ts")).doctorCommand,
};

/**
 * Admin commands use SECRET_KEY, or else the key `dev` generated in
 * DATA_DIR; those that store no secret need neither.
 */
async function adminConfig(): Promise<Config> {
  const env = readEnv();
  const config = loadConfig(env);
  if (config.secretKey) return config;
  const { readDataDirSecret, SECRET_KEY_FILE } = await import("./dev.ts");
  const key = await readDataDirSecret(config.dataDir, SECRET_KEY_FILE);
  return key ? loadConfig({ ...env, SECRET_KEY: key }) : config;
}

/** Runs one command and returns the process exit code. */
export async function runCli(args: string[]): Promise<number> {
  const [command = "serve", ...rest] = args;
  try {
    if (command === "help" || command === "--help" || command === "-h") {
      printOut(USAGE);
      return 0;
    }
    if (command === "serve") return await serveCommand(rest);
    if (command === "dev") return await devCommand(rest);
    if (command === "simulator") {
      return await (await import("./simulator_cli.ts")).simulatorCommand(rest);
    }
    const admin = ADMIN[command];
    if (command !== "migrate" && !admin) {
      throw new UsageError(`Unknown command "${command}"`);
    }
    // Before the database opens: a bad option changes nothing.
    const migrateFlags = command === "migrate"
      ? (await import("./args.ts")).parseFlags(rest, {})
      : undefined;
    await using container = createContainer(await adminConfig(), {
      log: undefined,
      secretKeyOptional: true,
    });
    const applied = await migrateToLatest(container.db, {
      libsql: container.dbBatch,
    });
    if (migrateFlags) {
      const text = applied.length
        ? `Applied ${applied.join(", ")}`
        : "Database is up to date";
      printOut(migrateFlags.json ? JSON.stringify({ applied }, null, 2) : text);
      return 0;
    }
    return (await (await admin!())(container, rest)) ?? 0;
  } catch (err) {
    if (err instanceof UsageError) {
      printErr(`${err.message}\n\n${USAGE}`);
      return 2;
    }
    if (
      err instanceof ConfigError || err instanceof AppError ||
      (err instanceof TypeError && "code" in err &&
        String(err.code).startsWith("ERR_PARSE_ARGS"))
    ) {
      printErr(err.message);
      return 1;
    }
    printErr(`Error: ${(err as Error).message ?? err}`);
    return 1;
  }
}
