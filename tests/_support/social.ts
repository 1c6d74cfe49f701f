// A harness whose Graph API is a real simulator on loopback, with social accounts seeded on both sides.
import { createHarness, type EngineName, type Harness } from "../_harness.ts";
import { ManualClock } from "../../src/clock.ts";
import { type Simulator, startSimulator } from "../../src/simulator/server.ts";
import {
  addSocialAccount,
  addSocialPosts,
  type SimAccountInput,
  type SimPostInput,
} from "../../src/simulator/social_control.ts";
import { socialState } from "../../src/simulator/social_state.ts";
import { connectSocialAccount } from "../../src/domain/social/social_service.ts";
import type { SocialAccount } from "../../src/domain/social/social.ts";

export interface SocialWorld extends AsyncDisposable {
  h: Harness;
  sim: Simulator;
  clock: ManualClock;
  /** Seeds the account in the simulator and connects it to `accountId` (the harness tenant by default). */
  connect(
    input: SimAccountInput,
    posts?: SimPostInput[],
    accountId?: string,
  ): Promise<SocialAccount>;
  /** Social Graph calls the simulator has answered so far. */
  calls(): number;
}

let upstreamCounter = 0;

/** A fresh numeric upstream id, distinct in this process. */
export function nextUpstreamId(network: "instagram" | "facebook"): string {
  const n = String(++upstreamCounter).padStart(5, "0");
  return network === "instagram" ? `178414000${n}` : `10000000${n}`;
}

export async function startSocialWorld(
  options: { engine?: EngineName; env?: Record<string, string>; dir?: string } =
    {},
): Promise<SocialWorld> {
  const sim = await startSimulator({ appSecret: "test-app-secret" });
  // Real time: the simulator serves stories by the wall clock.
  const clock = new ManualClock(new Date());
  let h: Harness;
  try {
    h = await createHarness({
      engine: options.engine,
      clock,
      env: { META_GRAPH_URL: sim.graphUrl, ...options.env },
    });
  } catch (err) {
    await sim.stop();
    throw err;
  }
  return {
    h,
    sim,
    clock,
    async connect(input, posts = [], accountId = h.tenant.account.id) {
      addSocialAccount(sim.state, input);
      addSocialPosts(sim.state, input.id, posts);
      return await connectSocialAccount(h.container, {
        accountId,
        network: input.network,
        upstreamId: input.id,
        username: input.username,
        accessToken: `token-${input.id}`,
      });
    },
    calls: () => socialState(sim.state).calls.length,
    async [Symbol.asyncDispose]() {
      await h[Symbol.asyncDispose]();
      await sim.stop();
    },
  };
}
