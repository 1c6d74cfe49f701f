// /panel/conversations/resolve: the server sends a single match straight to
// its conversation; here the page shows the choice among several, or that
// nothing matched (the same visibility as the API).
import { useEffect, useState } from "preact/hooks";
import { api } from "./api.ts";
import { t } from "./i18n.ts";
import { navigate } from "./router.ts";
import { contactName } from "./list.tsx";
import type { Conversation } from "./types.ts";

export function ResolveView({ query }: { query: string }) {
  const [found, setFound] = useState<Conversation[] | undefined>();
  const [error, setError] = useState("");
  useEffect(() => {
    (async () => {
      const { data } = await api<
        { data: { conversationId: string | null; alternatives: string[] } }
      >("GET", `/api/v1/conversations/resolve${query}`);
      const ids = data.conversationId
        ? [data.conversationId, ...data.alternatives]
        : [];
      if (ids.length === 1) return navigate(`/panel/c/${ids[0]}`, true);
      const all = await Promise.all(
        ids.map((id) =>
          api<{ data: Conversation }>("GET", `/api/v2/conversations/${id}`)
            .then((r) => r.data)
        ),
      );
      setFound(all);
    })().catch((err) => setError((err as Error).message));
  }, [query]);
  return (
    <section class="thread-pane resolve" aria-labelledby="resolve-heading">
      <h2 id="resolve-heading">{t("conversations")}</h2>
      {error && (
        <p role="alert" class="error">{t("error", { message: error })}</p>
      )}
      {!error && !found && <p role="status">{t("resolving")}</p>}
      {found && found.length === 0 && <p role="status">{t("noMatch")}</p>}
      {found && found.length > 1 && (
        <>
          <p>{t("chooseOne")}</p>
          <ul class="choices">
            {found.map((c) => (
              <li>
                <a
                  href={`/panel/c/${c.id}`}
                  onClick={(e) => {
                    e.preventDefault();
                    navigate(`/panel/c/${c.id}`);
                  }}
                >
                  {contactName(c)} · {c.contact.phoneNumber ?? ""} ·{" "}
                  {t(c.status)}
                </a>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
