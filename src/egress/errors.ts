/** What went wrong with an outbound request; callers decide retry policy from it. */
export type EgressErrorKind =
  | "invalid_url"
  | "blocked"
  | "dns"
  | "timeout"
  | "connect"
  | "tls"
  | "network"
  | "protocol";

/** The one error type of src/egress; messages say what failed and why. */
export class EgressError extends Error {
  override readonly name = "EgressError";
  readonly kind: EgressErrorKind;

  constructor(
    kind: EgressErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.kind = kind;
  }
}

/** The reason inside an unknown thrown value, never empty. */
export function reasonOf(err: unknown): string {
  if (err instanceof Error) return err.message || err.name || "unknown error";
  const text = String(err);
  return text === "" ? "unknown error" : text;
}
