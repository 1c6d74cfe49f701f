/** A command line the CLI cannot run; printed with the usage (run.ts). Its own file, so serve does not load node:util for args.ts. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}
