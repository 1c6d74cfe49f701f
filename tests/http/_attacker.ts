// The attacker of meta_webhook_attack_test.ts, in its own process as a real
// one would be (its uploads do not share the server's event loop): five
// forged posts a second and 30 forged 2 MB bodies held open, until its
// standard input closes; then it prints what it was answered, as JSON.
//
//   deno run -A tests/http/_attacker.ts <port> <proxy|rotating>
import { forgedPost, keepHeld } from "./_attack.ts";

export const HELD_LENGTH = 2_000_000;
/** Each held body sends this much, then stops: the bytes it holds are real. */
export const HELD_SENT = 1_500_000;

if (import.meta.main) {
  const port = Number(Deno.args[0]);
  const rotating = Deno.args[1] === "rotating";
  let n = 0;
  // Every other post from the proxy itself, the rest from a new address each.
  const forwardedFor = () =>
    rotating && n++ % 2 === 0
      ? `203.0.${Math.floor(n / 250) % 250}.${n % 250}`
      : undefined;
  const forged: number[] = [];
  let stopped = false;
  const posting = (async () => {
    const pending: Promise<void>[] = [];
    while (!stopped) {
      pending.push(
        forgedPost(port, forwardedFor()).then((s) => void forged.push(s)),
      );
      await new Promise((r) => setTimeout(r, 200));
    }
    await Promise.all(pending);
  })();
  const held = keepHeld(port, 30, {
    length: HELD_LENGTH,
    sent: HELD_SENT,
    forwardedFor: () => forwardedFor() ?? "",
  });
  await Deno.stdin.readable.pipeTo(new WritableStream());
  stopped = true;
  await held.stop();
  await posting;
  await Deno.stdout.write(
    new TextEncoder().encode(JSON.stringify({ forged, held: held.answers })),
  );
}
