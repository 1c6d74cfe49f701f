// POST and PATCH /contacts as atomic units (issue 30, item 1): on libSQL no
// interactive transaction, and their races settled by guards.
import assert from "node:assert/strict";
// First: the app's schemas extend zod before any domain schema is built.
import { engineTest, type Harness } from "../../_harness.ts";
import { AppError } from "../../../src/errors.ts";
import {
  createContact,
  updateContact,
} from "../../../src/domain/contacts/contact_service.ts";
import type { Container } from "../../../src/container.ts";
import {
  beforeNextBatch,
  forbidTransactions,
  racingInstance,
} from "../../_support/instances.ts";

const PHONE = "+5491155550401";

async function contactRows(h: Harness) {
  return await h.container.db.selectFrom("contacts")
    .select(["id", "phone_number", "custom_fields", "name"]).execute();
}

async function createdEvents(h: Harness): Promise<number> {
  const rows = await h.container.db.selectFrom("events").select("id")
    .where("type", "=", "contact.created").execute();
  return rows.length;
}

engineTest(
  "POST and PATCH /contacts run without an interactive transaction on libSQL",
  async (h) => {
    forbidTransactions(h.container);
    const created = await h.request("POST", "/api/v2/contacts", {
      body: { phoneNumber: PHONE, name: "Ana", customFields: { a: "1" } },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.data.id;
    const patched = await h.request("PATCH", `/api/v2/contacts/${id}`, {
      body: { customFields: { b: "2" }, tags: ["vip"], email: "a@b.co" },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const got = await h.request("GET", `/api/v2/contacts/${id}`);
    // What PATCH answered is what is stored.
    assert.deepEqual(patched.body.data, got.body.data);
    assert.deepEqual(got.body.data.customFields, { a: "1", b: "2" });
    assert.deepEqual(got.body.data.tags, ["vip"]);
    const taken = await h.request("POST", "/api/v2/contacts", {
      body: { phoneNumber: PHONE },
    });
    assert.equal(taken.status, 409);
    assert.equal(taken.body.error.code, "CONTACT_ALREADY_EXISTS");
    assert.equal(await createdEvents(h), 1);
  },
);

engineTest(
  "the same contact created through two instances at once is created once; the other gets CONTACT_ALREADY_EXISTS naming it",
  async (h) => {
    await using other = racingInstance(h);
    const accountId = h.tenant.account.id;
    const create = (on: Container, name: string) =>
      createContact(on, { accountId, phoneNumber: PHONE, name });
    let theirs: Promise<unknown> = Promise.resolve();
    let named: string | undefined;
    if (h.engine === "libsql") {
      // Ours read no contact; theirs is stored before our batch.
      const seen = beforeNextBatch(h, () => theirs = create(other, "B"));
      await assert.rejects(create(h.container, "A"), (err: AppError) => {
        assert.equal(err.code, "CONTACT_ALREADY_EXISTS");
        named = (err.details as { contactId?: string }).contactId;
        return true;
      });
      // Ours refused by its guard; planned again, its lookup refuses it.
      assert.equal(seen.batches, 1);
    } else {
      const results = await Promise.allSettled([
        create(h.container, "A"),
        create(other, "B"),
      ]);
      assert.deepEqual(
        results.map((r) => r.status).sort(),
        ["fulfilled", "rejected"],
      );
    }
    await theirs;
    const rows = await contactRows(h);
    assert.equal(rows.length, 1);
    if (h.engine === "libsql") assert.equal(named, rows[0]!.id);
    assert.equal(await createdEvents(h), 1);
  },
);

engineTest(
  "two PATCHes of a contact's custom fields at once through two instances both land",
  async (h) => {
    await using other = racingInstance(h);
    const accountId = h.tenant.account.id;
    const { id } = await createContact(h.container, {
      accountId,
      phoneNumber: PHONE,
    });
    const patch = (on: Container, key: string) =>
      updateContact(on, {
        accountId,
        id,
        changes: { customFields: { [key]: key } },
      });
    if (h.engine === "libsql") {
      // Ours merged into the fields it read; theirs changed them meanwhile.
      const seen = beforeNextBatch(h, () => patch(other, "theirs"));
      const ours = await patch(h.container, "ours");
      // Refused once, then merged into theirs.
      assert.equal(seen.batches, 2);
      assert.deepEqual(ours.customFields, { theirs: "theirs", ours: "ours" });
    } else {
      await Promise.all([patch(h.container, "ours"), patch(other, "theirs")]);
    }
    const [row] = await contactRows(h);
    assert.deepEqual(JSON.parse(row!.custom_fields), {
      ours: "ours",
      theirs: "theirs",
    });
  },
);

engineTest(
  "a PATCH to a number another instance gives a new contact meanwhile is refused with CONTACT_ALREADY_EXISTS",
  async (h) => {
    await using other = racingInstance(h);
    const accountId = h.tenant.account.id;
    const { id } = await createContact(h.container, {
      accountId,
      phoneNumber: "+5491155550402",
    });
    const move = () =>
      updateContact(h.container, {
        accountId,
        id,
        changes: { phoneNumber: PHONE },
      });
    if (h.engine !== "libsql") {
      await createContact(other, { accountId, phoneNumber: PHONE });
    } else {
      beforeNextBatch(
        h,
        () => createContact(other, { accountId, phoneNumber: PHONE }),
      );
    }
    await assert.rejects(move(), (err: AppError) => {
      assert.equal(err.code, "CONTACT_ALREADY_EXISTS");
      assert.ok((err.details as { contactId?: string }).contactId);
      return true;
    });
    const phones = (await contactRows(h)).map((r) => r.phone_number).sort();
    assert.deepEqual(phones, ["+5491155550401", "+5491155550402"]);
  },
);
