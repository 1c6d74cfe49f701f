import type { Harness } from "../_harness.ts";

/** Holds the group-commit writer until `open()`, so requests queue behind one transaction. */
export async function holdWriter(h: Harness) {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => open = resolve);
  let running!: () => void;
  const started = new Promise<void>((resolve) => running = resolve);
  const blocker = h.container.commits.run(async () => {
    running();
    await gate;
  });
  await started;
  return { open, blocker };
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
