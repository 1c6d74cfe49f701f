// The contact panel: phone, name, e-mail and tags of the conversation's contact.
import { useEffect, useState } from "preact/hooks";
import { api } from "./api.ts";
import { t } from "./i18n.ts";
import type { Conversation } from "./types.ts";

interface ContactDetail {
  phoneNumber: string | null;
  name: string | null;
  email: string | null;
  tags: string[];
}

export function ContactPanel({ c }: { c: Conversation }) {
  const [contact, setContact] = useState<ContactDetail | undefined>();
  useEffect(() => {
    let live = true;
    api<{ data: ContactDetail }>("GET", `/api/v2/contacts/${c.contactId}`)
      .then(({ data }) => live && setContact(data))
      .catch(() => {});
    return () => void (live = false);
  }, [c.contactId]);
  const value = (v: string | null | undefined) => v || t("none");
  return (
    <aside class="contact-pane" aria-labelledby="contact-heading">
      <h3 id="contact-heading">{t("contact")}</h3>
      <dl>
        <dt>{t("phone")}</dt>
        <dd>{value(contact?.phoneNumber ?? c.contact.phoneNumber)}</dd>
        <dt>{t("name")}</dt>
        <dd>{value(contact?.name ?? c.contact.name)}</dd>
        <dt>{t("email")}</dt>
        <dd>{value(contact?.email)}</dd>
        <dt>{t("tags")}</dt>
        <dd>
          {contact?.tags.length
            ? (
              <ul class="tags">
                {contact.tags.map((tag) => <li key={tag}>{tag}</li>)}
              </ul>
            )
            : t("none")}
        </dd>
      </dl>
    </aside>
  );
}
