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
