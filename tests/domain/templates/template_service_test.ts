import assert from "node:assert/strict";
import { CompiledQuery } from "kysely";
import type { ManualClock } from "../../../src/clock.ts";
import { AppError } from "../../../src/errors.ts";
import { templatePageQuery } from "../../../src/domain/templates/template_repo.ts";
import {
  createTemplate,
  findSendableTemplate,
  type NewTemplate,
  updateTemplateStatus,
} from "../../../src/domain/templates/template_service.ts";
import { engineTest, type Harness } from "../../_harness.ts";
import {
  jsonDepth,
  MAX_JSON_BYTES,
  MAX_JSON_DEPTH,
} from "../../../src/domain/json_bounds.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

function input(h: Harness, extra: Partial<NewTemplate> = {}): NewTemplate {
  return {
    accountId: h.tenant.account.id,
    name: "order_update",
    language: "es_AR",
    category: "UTILITY",
    status: "approved",
    components: [{ type: "BODY", text: "Hola {{1}}" }],
    ...extra,
  };
}

function isCode(code: string) {
  return (e: unknown) => e instanceof AppError && e.code === code;
}

engineTest(
  "createTemplate rejects invalid fields with VALIDATION_ERROR",
  async (h) => {
    const cases: [Partial<NewTemplate>, RegExp][] = [
      [{ name: "Order-Update" }, /name "Order-Update"/],
      [{ name: "" }, /name ""/],
      [{ name: "a".repeat(513) }, /name/],
      [{ language: "spanish" }, /language "spanish"/],
      [{ language: "es-AR" }, /language "es-AR"/],
      [{ category: "PROMO" }, /category "PROMO"/],
      [{ status: "live" }, /status "live"/],
      [{ components: { type: "BODY" } }, /components must be an array/],
      [{ components: ["BODY"] }, /components\[0\] must be an object/],
      [
        { components: [{ type: "BODY" }, { type: "IMAGE" }] },
        /components\[1\]\.type/,
      ],
      [{ components: [{ type: "BODY", text: 5 }] }, /components\[0\]\.text/],
    ];
    for (const [extra, message] of cases) {
      await assert.rejects(
        createTemplate(h.container, input(h, extra)),
        (e) =>
          isCode("VALIDATION_ERROR")(e) && message.test((e as Error).message),
        JSON.stringify(extra),
      );
    }
    for (const language of ["en", "en_US", "es_AR", "fil"]) {
      const t = await createTemplate(h.container, input(h, { language }));
      assert.equal(t.language, language);
    }
  },
);

/** One BODY component whose `example` nests `levels` deep. */
function deepComponents(levels: number): unknown[] {
  let example: unknown = {};
  for (let i = 1; i < levels; i++) example = { a: example };
  return [{ type: "BODY", text: "Hola {{1}}", example }];
}

engineTest(
  "createTemplate refuses components past the JSON bounds, so GET /templates keeps answering 200",
  async (h) => {
    // The array is level 1, the component 2, its example 3 and deeper.
    const atBound = deepComponents(MAX_JSON_DEPTH - 2);
    assert.equal(jsonDepth(atBound), MAX_JSON_DEPTH);
    const cases: [unknown[], RegExp][] = [
      [deepComponents(MAX_JSON_DEPTH - 1), /components must nest at most 32/],
      // As deep as a command line can carry (128 KiB): enough to break c.json.
      [deepComponents(20_000), /components must nest at most 32/],
      [
        [{ type: "BODY", text: "x".repeat(MAX_JSON_BYTES) }],
        /components must be at most 65536 bytes as JSON/,
      ],
    ];
    for (const [components, message] of cases) {
      await assert.rejects(
        createTemplate(h.container, input(h, { components })),
        (e) =>
          isCode("VALIDATION_ERROR")(e) && message.test((e as Error).message),
      );
    }
    await createTemplate(h.container, input(h, { components: atBound }));
    const list = await h.request("GET", "/api/v2/templates");
    assert.equal(list.status, 200, JSON.stringify(list.body));
    assert.deepEqual(list.body.data.map((t: Json) => t.components), [atBound]);
  },
);

engineTest(
  "createTemplate only binds a channel of the same account",
  async (h) => {
    const other = await h.makeTenant("tpl-svc-other");
    await assert.rejects(
      createTemplate(h.container, input(h, { channelId: other.channel.id })),
      isCode("INVALID_CHANNEL"),
    );
    const t = await createTemplate(
      h.container,
      input(h, { channelId: h.tenant.channel.id, metaTemplateId: "m-1" }),
    );
    assert.equal(t.channelId, h.tenant.channel.id);
    assert.equal(t.metaTemplateId, "m-1");
  },
);

engineTest(
  "updateTemplateStatus changes the status or says why not",
  async (h) => {
    const t = await createTemplate(
      h.container,
      input(h, { status: "pending" }),
    );
    const updated = await updateTemplateStatus(h.container, t.id, "approved");
    assert.deepEqual(updated, { ...t, status: "approved" });
    await assert.rejects(
      updateTemplateStatus(h.container, t.id, "live"),
      isCode("VALIDATION_ERROR"),
    );
    await assert.rejects(
      updateTemplateStatus(
        h.container,
        "01900000-0000-7000-8000-000000000000",
        "paused",
      ),
      isCode("NOT_FOUND"),
    );
  },
);

engineTest(
  "findSendableTemplate prefers approved, then the channel's own, then the newest",
  async (h) => {
    const clock = h.clock as ManualClock;
    const channelId = h.tenant.channel.id;
    const db = h.container.db;
    const query = {
      accountId: h.tenant.account.id,
      channel: { id: channelId, wabaId: h.tenant.channel.wabaId },
      name: "order_update",
      language: "es_AR",
    };
    assert.equal(await findSendableTemplate(db, query), undefined);

    const global = await createTemplate(h.container, input(h));
    assert.equal((await findSendableTemplate(db, query))?.id, global.id);
    clock.advance(1_000);
    const own = await createTemplate(h.container, input(h, { channelId }));
    assert.equal((await findSendableTemplate(db, query))?.id, own.id);
    clock.advance(1_000);
    const newerGlobal = await createTemplate(h.container, input(h));
    assert.equal(
      (await findSendableTemplate(db, query))?.id,
      own.id,
      "the channel's own template wins over a newer global one",
    );
    await updateTemplateStatus(h.container, own.id, "paused");
    assert.equal(
      (await findSendableTemplate(db, query))?.id,
      newerGlobal.id,
      "an approved global template wins over a paused own one",
    );
    await updateTemplateStatus(h.container, global.id, "rejected");
    await updateTemplateStatus(h.container, newerGlobal.id, "rejected");
    const blocked = await findSendableTemplate(db, query);
    assert.equal(blocked?.id, own.id, "with none approved, the best match");
    assert.equal(blocked?.status, "paused");
    assert.equal(
      await findSendableTemplate(db, { ...query, language: "en_US" }),
      undefined,
    );
    const other = await h.makeTenant("sendable-other");
    assert.equal(
      await findSendableTemplate(db, {
        ...query,
        accountId: other.account.id,
        channel: { id: other.channel.id, wabaId: other.channel.wabaId },
      }),
      undefined,
    );
  },
);

engineTest(
  "the templates list query uses templates_list_idx without a sort",
  async (h) => {
    const db = h.container.db;
    for (
      const filter of [
        { accountId: h.tenant.account.id },
        {
          accountId: h.tenant.account.id,
          channel: {
            id: h.tenant.channel.id,
            wabaId: h.tenant.channel.wabaId,
          },
          status: "approved" as const,
        },
      ]
    ) {
      const compiled = templatePageQuery(db, {
        ...filter,
        limit: 20,
        offset: 0,
      })
        .compile();
      const result = await db.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`explain query plan ${compiled.sql}`, [
          ...compiled.parameters,
        ]),
      );
      const text = result.rows.map((r) => r.detail).join("\n");
      assert.match(text, /USING (COVERING )?INDEX templates_list_idx/, text);
      assert.doesNotMatch(text, /TEMP B-TREE/, text);
    }
  },
);
