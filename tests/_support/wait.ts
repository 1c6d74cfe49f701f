/** Waits on a condition with a deadline instead of a fixed sleep. */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  options: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 20));
  }
  throw new Error(
    `Timed out waiting for ${options.what ?? "condition"}${
      last ? `: ${(last as Error).message}` : ""
    }`,
  );
}

/** Ports handed out below Linux's ephemeral range (32768-60999). */
const PORT_FLOOR = 20_000;
const PORT_SPAN = 12_000;

/**
 * A TCP port free on 127.0.0.1 now, for a process spawned next to bind.
 * Drawn at random below the ephemeral range: a port the kernel picked for
 * `port: 0` can be handed to another test's listener or to an outgoing
 * connection's source port before the spawned process binds it ("Address
 * already in use", seen once in a full run beside a dev server).
 */
export function freePort(): number {
  for (let i = 0; i < 100; i++) {
    const port = PORT_FLOOR + Math.floor(Math.random() * PORT_SPAN);
    try {
      Deno.listen({ hostname: "127.0.0.1", port }).close();
      return port;
    } catch (err) {
      if (!(err instanceof Deno.errors.AddrInUse)) throw err;
    }
  }
  throw new Error(
    `No free port found in ${PORT_FLOOR}-${PORT_FLOOR + PORT_SPAN - 1}`,
  );
}

/** A promise a test opens when it chooses (a handler or receiver held until then). */
export function gate(): { open: () => void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((r) => open = r);
  return { open, opened };
}
