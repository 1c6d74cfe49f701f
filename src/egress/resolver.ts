/** Resolves a host name to every IP address it has, in the order to try them. */
export type Resolver = (host: string) => Promise<string[]>;

/** Resolves with getaddrinfo, so /etc/hosts applies (Deno.resolveDns would skip it). */
export async function systemResolver(host: string): Promise<string[]> {
  // node:dns is imported on the first look-up, not when the program starts.
  const { lookup } = await import("node:dns/promises");
  const answers = await lookup(host, { all: true });
  return answers.map((answer) => answer.address);
}
