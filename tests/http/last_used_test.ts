// lastUsedAt of API keys and agent user tokens: set on use, but written at
// most once per LAST_USED_RESOLUTION_MS, not on every request.
import assert from "node:assert/strict";
import type { ManualClock } from "../../src/clock.ts";
import { toDbTime } from "../../src/db/time.ts";
import { LAST_USED_RESOLUTION_MS } from "../../src/domain/accounts/account.ts";
import {
  createAgent,
  createApiKey,
  listAgents,
  listApiKeys,
  revokeApiKey,
} from "../../src/domain/accounts/account_service.ts";
import { touchLastUsed } from "../../src/domain/accounts/account_repo.ts";
import { engineTest, type Harness } from "../_harness.ts";

const CONVERSATIONS = "/api/v2/conversations";

type Read = () => Promise<string | null>;

/** Uses the credential at several clock readings and checks what is stored after each. */
async function assertCoarse(h: Harness, token: string, read: Read) {
  const clock = h.clock as ManualClock;
  const use = async () => {
    const res = await h.request("GET", CONVERSATIONS, { key: token });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  };
  assert.equal(await read(), null, "never used");

  await use();
  const first = toDbTime(clock.now());
  assert.equal(await read(), first, "first use is recorded");

  // Within the resolution, further uses write nothing: the value stays.
  for (
    const step of [
      1,
      LAST_USED_RESOLUTION_MS / 2,
      LAST_USED_RESOLUTION_MS / 2 - 2,
    ]
  ) {
    clock.advance(step);
    await use();
    await use();
    assert.equal(await read(), first, `${step} ms later`);
  }
  // Once the stored value is a full resolution old, the next use moves it.
  clock.advance(1);
  await use();
  const second = toDbTime(clock.now());
  assert.notEqual(second, first);
  assert.equal(await read(), second, "a use past the resolution is recorded");
}

engineTest(
  "an API key's lastUsedAt is written on use, at most once a minute",
  async (h) => {
    const { key, apiKey } = await createApiKey(h.container, {
      accountId: h.tenant.account.id,
      scopes: ["conversations:read"],
    });
    const read = async () =>
      (await listApiKeys(h.container, h.tenant.account.id))
        .find((k) => k.id === apiKey.id)!.lastUsedAt;
    await assertCoarse(h, key, read);
  },
);

engineTest(
  "an agent token's lastUsedAt is written on use, at most once a minute",
  async (h) => {
    const { token, agent } = await createAgent(h.container, {
      accountId: h.tenant.account.id,
      name: "Ana",
      visibility: "all",
    });
    const read = async () =>
      (await listAgents(h.container, h.tenant.account.id))
        .find((a) => a.id === agent.id)!.lastUsedAt;
    await assertCoarse(h, token, read);
  },
);

engineTest(
  "a revoked key records no use; one refused for scope does",
  async (h) => {
    const revoked = await createApiKey(h.container, {
      accountId: h.tenant.account.id,
      scopes: ["conversations:read"],
    });
    await revokeApiKey(h.container, revoked.apiKey.id);
    const narrow = await createApiKey(h.container, {
      accountId: h.tenant.account.id,
      scopes: ["account:read"],
    });
    const refused = await h.request("GET", CONVERSATIONS, { key: revoked.key });
    assert.equal(refused.status, 401);
    const forbidden = await h.request("GET", CONVERSATIONS, {
      key: narrow.key,
    });
    assert.equal(forbidden.status, 403);

    const keys = await listApiKeys(h.container, h.tenant.account.id);
    const lastUsed = (id: string) => keys.find((k) => k.id === id)!.lastUsedAt;
    assert.equal(lastUsed(revoked.apiKey.id), null);
    assert.equal(lastUsed(narrow.apiKey.id), toDbTime(h.clock.now()));
  },
);

engineTest(
  "touchLastUsed leaves a value a concurrent request already moved past the threshold",
  async (h) => {
    const { apiKey } = await createApiKey(h.container, {
      accountId: h.tenant.account.id,
      scopes: ["account:read"],
    });
    const at = (ms: number) => toDbTime(new Date(Date.UTC(2026, 10, 20) + ms));
    const read = async () =>
      (await listApiKeys(h.container, h.tenant.account.id))
        .find((k) => k.id === apiKey.id)!.lastUsedAt;
    // Two requests both saw the old value; the first write wins, the second finds it fresh.
    await touchLastUsed(h.container.db, "api_keys", apiKey.id, at(0), at(-1));
    await touchLastUsed(h.container.db, "api_keys", apiKey.id, at(5), at(-1));
    assert.equal(await read(), at(0));
    await touchLastUsed(
      h.container.db,
      "api_keys",
      apiKey.id,
      at(60_000),
      at(0),
    );
    assert.equal(await read(), at(60_000));
  },
);
