// The channel access token every send job opens: kept opened in memory,
// never served stale after the channel's token changes.
import assert from "node:assert/strict";
import { createHarness, ENGINES } from "../../_harness.ts";
import {
  channelAccessToken,
  updateChannel,
} from "../../../src/domain/channels/channel_service.ts";

for (const engine of ENGINES) {
  Deno.test(`[${engine}] a channel's new access token is used from the next read on`, async () => {
    await using h = await createHarness({ engine });
    const c = h.container;
    const id = h.tenant.channel.id;
    const first = await channelAccessToken(c, id);
    assert.equal(await channelAccessToken(c, id), first);
    await updateChannel(c, id, { accessToken: "EAAG-rotated-token" });
    assert.equal(await channelAccessToken(c, id), "EAAG-rotated-token");
    await updateChannel(c, id, { accessToken: first });
    assert.equal(await channelAccessToken(c, id), first);
  });
}
