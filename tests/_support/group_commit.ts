import type { Harness } from "../_harness.ts";

/**
 * Holds the group-commit writer until `open()`, so requests queue behind one
 * transaction; on libSQL the writer of atomic units' batches instead (a
 * unit whose read waits: the units that come meanwhile go in the next
 * batch), which is what every program path there writes through.
 */
export async function holdWriter(h: Harness) {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => open = resolve);
  const hold = () => {
    let running!: () => void;
    const started = new Promise<void>((resolve) => running = resolve);
    return {
      started,
      wait: async () => {
        running();
        await gate;
      },
    };
  };
  const blockers: Promise<unknown>[] = [];
  if (!h.container.commits.batchStats) {
    const writer = hold();
    blockers.push(h.container.commits.run(writer.wait));
    await writer.started;
  } else {
    const batches = hold();
    blockers.push(h.container.commits.runAtomic({
      read: batches.wait,
      write: () => () => undefined,
    }));
    await batches.started;
  }
  return { open, blocker: Promise.all(blockers) };
}

/** An idempotency_keys row: a small row for group-commit units to write. */
export function keyRow(accountId: string, key: string) {
  return {
    account_id: accountId,
    key,
    route: "t",
    request_hash: "h",
    response_status: 200,
    response_body: "{}",
    created_at: "x",
    expires_at: "x",
  };
}

/** Lets the event loop turn a few times (timers and I/O included). */
export async function turns(n = 5) {
  for (let i = 0; i < n; i++) await new Promise((r) => setTimeout(r, 0));
}
