// A queued outbound template message, accepted in-process (no HTTP, no workers).
import type { Harness } from "../_harness.ts";
import { createTemplate } from "../../src/domain/templates/template_service.ts";
import { acceptMessage } from "../../src/domain/messages/send_service.ts";

/** Creates the approved template "notice" and accepts one message of it; returns the message id. */
export async function queuedTemplate(h: Harness): Promise<string> {
  await createTemplate(h.container, {
    accountId: h.tenant.account.id,
    name: "notice",
    language: "en",
    category: "UTILITY",
    status: "approved",
    components: [{ type: "BODY", text: "Notice" }],
  });
  return await queuedNotice(h, "+5491144445555");
}

/** Accepts one more message of "notice" (made by queuedTemplate) to `to`; returns its id. */
export async function queuedNotice(h: Harness, to: string): Promise<string> {
  const accepted = await h.container.commits.runPlanned(async (db, writes) => {
    const message = await acceptMessage(
      db,
      writes,
      h.container,
      h.tenant.account.id,
      {
        phoneNumberId: h.tenant.channel.id,
        to,
        type: "template",
        template: { name: "notice", language: { code: "en" } },
      },
    );
    return () => message;
  });
  return accepted.id;
}
