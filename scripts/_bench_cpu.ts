// What the in-process CPU benchmarks share (bench_batch_cpu.ts,
// bench_send_cpu.ts, bench_callback_cpu.ts, bench_send_job_cpu.ts).
import { createHarness, type Harness } from "../tests/_harness.ts";
import { createTemplate } from "../src/domain/templates/template_service.ts";
import { systemClock } from "../src/clock.ts";
import { templateSendTo } from "./_bench.ts";

/** The real app on a SQLite file with a seeded tenant and the approved template `order_update`. */
export async function benchHarness(
  env: Record<string, string> = {},
): Promise<Harness> {
  const h = await createHarness({ clock: systemClock, env });
  await createTemplate(h.container, {
    accountId: h.tenant.account.id,
    channelId: h.tenant.channel.id,
    name: "order_update",
    language: "es_AR",
    category: "UTILITY",
    status: "approved",
    components: [{
      type: "BODY",
      text: "Hola {{1}}, tu pedido {{2}} está en camino",
    }],
  });
  return h;
}

/** This process's user + system CPU in ms (all threads). */
export function cpuMs(): number {
  const fields = Deno.readTextFileSync("/proc/self/stat").split(") ")[1]!
    .split(" ");
  // utime and stime, in clock ticks of 10 ms (USER_HZ on Linux is 100).
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const ENCODER = new TextEncoder();

/** POSTs `body` to the app as the tenant's key; the status and text of the answer. */
export async function post(
  h: Harness,
  path: string,
  body: string,
): Promise<{ status: number; text: string }> {
  const res = await h.app.fetch(
    new Request(`http://localhost/api/v2${path}`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${h.tenant.key}`,
        "content-type": "application/json",
        // As wrk and every HTTP client send it: without it Hono's bodyLimit
        // reads the body through a stream and rebuilds the Request, which
        // no request over a socket costs (about 5 % of this benchmark's CPU).
        "content-length": String(ENCODER.encode(body).length),
      },
      body,
    }),
  );
  return { status: res.status, text: await res.text() };
}

/** Accepts `n` template sends (templateSendTo) through POST /messages; their ids. */
export async function acceptedSends(h: Harness, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const { status, text } = await post(
      h,
      "/messages",
      JSON.stringify({
        phoneNumberId: h.tenant.channel.id,
        ...templateSendTo(i),
      }),
    );
    if (status !== 201) throw new Error(`Send failed: ${status} ${text}`);
    ids.push(JSON.parse(text).data.id);
  }
  return ids;
}
