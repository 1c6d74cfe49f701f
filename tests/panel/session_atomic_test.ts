// Sign-in without an interactive transaction on libSQL (issue 30): the
// link's use and the session go in one batch after the read, guarded, so a
// link still works once when two sign-ins race on two instances.
import assert from "node:assert/strict";
import { engineTest, type Harness } from "../_harness.ts";
import { createAgent } from "../../src/domain/accounts/account_service.ts";
import {
  createLoginLink,
  signIn,
} from "../../src/domain/accounts/agent_session_service.ts";
import { anotherInstance, racing } from "../_support/race.ts";

async function linkOf(h: Harness) {
  const { agent } = await createAgent(h.container, {
    accountId: h.tenant.account.id,
    name: "Ana",
    visibility: "all",
  });
  const { token } = await createLoginLink(h.container, agent);
  if (h.container.dbBatch) h.container.dbBatch.forbidTransactions = true;
  return { agent, token };
}

async function sessions(h: Harness): Promise<number> {
  const rows = await h.container.db.selectFrom("agent_sessions").select(
    "agent_id",
  ).execute();
  return rows.length;
}

engineTest(
  "a login link signs in once, with no transaction on libSQL",
  async (h) => {
    const { agent, token } = await linkOf(h);
    const started = await signIn(h.container, token);
    assert.equal(started?.agentId, agent.id);
    assert.equal(await signIn(h.container, token), undefined, "used up");
    assert.equal(await sessions(h), 1);
  },
);

engineTest(
  "a sign-in that another instance's sign-in with the same link overtakes between its read and its batch finds the link used: one session",
  async (h) => {
    const { agent, token } = await linkOf(h);
    const libsql = h.container.engine === "libsql";
    let other: Awaited<ReturnType<typeof signIn>> | undefined;
    const race = racing(h.container, async () => {
      other = await signIn(anotherInstance(h.container), token);
    });
    const mine = await signIn({ ...h.container, ...race }, token);
    assert.equal(race.plans, libsql ? 2 : 1);
    if (libsql) {
      assert.equal(other?.agentId, agent.id);
      assert.equal(mine, undefined, "planned again: the link is used");
    } else assert.equal(mine?.agentId, agent.id);
    assert.equal(await sessions(h), 1);
  },
);

engineTest(
  "an agent revoked between a sign-in's read and its batch gets no session",
  async (h) => {
    const { agent, token } = await linkOf(h);
    const libsql = h.container.engine === "libsql";
    const race = racing(h.container, async () => {
      await h.container.db.updateTable("agents")
        .set({ revoked_at: new Date(0).toISOString() })
        .where("id", "=", agent.id).execute();
    });
    const mine = await signIn({ ...h.container, ...race }, token);
    assert.equal(race.plans, libsql ? 2 : 1);
    assert.equal(mine === undefined, libsql);
    assert.equal(await sessions(h), libsql ? 0 : 1);
  },
);
