import type { Logger } from "../log.ts";
import { createSimulatorApp } from "./app.ts";
import { flushCallbacks } from "./callbacks.ts";
import {
  type CallbackMode,
  createSimulatorState,
  settleSimulator,
  type SimulatorState,
  type StatusDelays,
} from "./state.ts";

export interface SimulatorOptions {
  /** 0 picks a free port. */
  port?: number;
  hostname?: string;
  callbackUrl?: string;
  appSecret: string;
  /** Sends per second per business number before 130429; default 80. */
  throughputPerSecond?: number;
  log?: Logger;
  /** Offsets of the sent/delivered/read callbacks; default 50/150/300 ms. */
  statusDelaysMs?: StatusDelays;
  /** Waits between attempts of a failed callback; default 200 ms, 1 s, 3 s, 10 s. */
  retryDelaysMs?: number[];
  /** "queued" holds status callbacks until flush() (tests); default "timers". */
  callbackMode?: CallbackMode;
}

export interface Simulator {
  /** http://127.0.0.1:PORT */
  url: string;
  /** url + "/v22.0", the META_GRAPH_URL to point the program at. */
  graphUrl: string;
  setCallbackUrl(url: string): void;
  /**
   * Queued mode: posts every queued status callback now, in the order the
   * timers would have, and returns how many attempts it made.
   */
  flush(): Promise<number>;
  /** Drops pending callbacks, then stops serving. */
  stop(): Promise<void>;
  state: SimulatorState;
}

/** Starts the upstream simulator on loopback. */
export function startSimulator(opts: SimulatorOptions): Promise<Simulator> {
  const state = createSimulatorState(opts);
  const app = createSimulatorApp(state);
  const hostname = opts.hostname ?? "127.0.0.1";
  const server = Deno.serve(
    { port: opts.port ?? 0, hostname, onListen: () => {} },
    app.fetch,
  );
  const url = `http://${hostname}:${server.addr.port}`;
  state.url = url;
  state.log.info("Simulator listening", { url });
  let stopping: Promise<void> | undefined;
  return Promise.resolve({
    url,
    graphUrl: `${url}/v22.0`,
    state,
    setCallbackUrl(callbackUrl: string) {
      state.callbackUrl = callbackUrl;
    },
    flush: () => flushCallbacks(state),
    stop() {
      stopping ??= (async () => {
        state.epoch.abort();
        await server.shutdown();
        await settleSimulator(state);
      })();
      return stopping;
    },
  });
}
