// The conversation list: newest activity first, keyset pages, filters,
// search, unread counts, last message preview and its ticks.
import { useRef } from "preact/hooks";
import { type Filter, loadList, now, store, useStore } from "./store.ts";
import { shortTime, t } from "./i18n.ts";
import { Ticks } from "./ticks.tsx";
import { plainText } from "./marks.ts";
import { navigate } from "./router.ts";
import type { Conversation } from "./types.ts";

export function contactName(c: Conversation): string {
  return c.contact.name || c.contact.phoneNumber || c.contact.username || "?";
}

let searchTimer: ReturnType<typeof setTimeout> | undefined;

function setFilter(change: Partial<Filter>, debounce = false) {
  Object.assign(store.filter, change);
  clearTimeout(searchTimer);
  if (debounce) searchTimer = setTimeout(() => void loadList(), 250);
  else void loadList();
}

export function ConversationList() {
  const s = useStore();
  const f = s.filter;
  const search = useRef<HTMLInputElement>(null);
  const openId = s.route.name === "conversation" ? s.route.id : undefined;
  return (
    <section class="list-pane" aria-labelledby="list-heading">
      <h2 id="list-heading" class="pane-title">{t("conversations")}</h2>
      <div class="filters" role="search">
        <label class="visually-hidden" for="search">{t("search")}</label>
        <input
          id="search"
          ref={search}
          type="search"
          placeholder={t("searchPlaceholder")}
          value={f.search}
          onInput={(e) =>
            setFilter({ search: (e.target as HTMLInputElement).value }, true)}
        />
        <fieldset>
          <legend class="visually-hidden">{t("filters")}</legend>
          <label class="visually-hidden" for="status-filter">
            {t("statusFilter")}
          </label>
          <select
            id="status-filter"
            value={f.status}
            onChange={(e) =>
              setFilter({
                status: (e.target as HTMLSelectElement)
                  .value as Filter["status"],
              })}
          >
            <option value="">{t("anyStatus")}</option>
            {(["open", "pending", "resolved", "closed"] as const).map((st) => (
              <option value={st}>{t(st)}</option>
            ))}
          </select>
          <Toggle
            label={t("mine")}
            on={f.assignee === "me"}
            toggle={() =>
              setFilter({ assignee: f.assignee === "me" ? "" : "me" })}
          />
          {s.boot.agent.visibility === "all" && (
            <Toggle
              label={t("unassigned")}
              on={f.assignee === "none"}
              toggle={() =>
                setFilter({ assignee: f.assignee === "none" ? "" : "none" })}
            />
          )}
          <Toggle
            label={t("unread")}
            on={f.unread}
            toggle={() => setFilter({ unread: !f.unread })}
          />
          <Toggle
            label={t("closingSoon")}
            on={f.windowClosing}
            toggle={() => setFilter({ windowClosing: !f.windowClosing })}
          />
        </fieldset>
      </div>
      {s.listError && (
        <p role="alert" class="error">{t("error", { message: s.listError })}</p>
      )}
      <ul
        class="conversations"
        aria-label={t("conversations")}
        aria-busy={s.listLoading}
      >
        {s.list.map((c) => <Row c={c} current={c.id === openId} key={c.id} />)}
      </ul>
      {!s.listLoading && s.list.length === 0 && (
        <p class="muted empty">{t("noConversations")}</p>
      )}
      {s.listHasMore && (
        <button
          type="button"
          class="more"
          onClick={() => void loadList(true)}
        >
          {t("loadMore")}
        </button>
      )}
    </section>
  );
}

function Toggle(
  { label, on, toggle }: { label: string; on: boolean; toggle: () => void },
) {
  return (
    <button type="button" class="chip" aria-pressed={on} onClick={toggle}>
      {label}
    </button>
  );
}

function Row({ c, current }: { c: Conversation; current: boolean }) {
  const left = Date.parse(c.serviceWindowExpiresAt ?? "") - now();
  const closing = left > 0 && left <= 2 * 3600_000;
  const when = c.lastMessageAt ?? c.createdAt;
  return (
    <li>
      <a
        href={`/panel/c/${c.id}`}
        class={`row${c.unreadCount ? " unread" : ""}`}
        aria-current={current ? "page" : undefined}
        data-conversation={c.id}
        onClick={(e) => {
          if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
          e.preventDefault();
          navigate(`/panel/c/${c.id}`);
        }}
      >
        <span class="row-top">
          <span class="row-name">{contactName(c)}</span>
          <time dateTime={when} class="row-time">{shortTime(when, now())}</time>
        </span>
        <span class="row-bottom">
          {c.lastMessageDirection === "outbound" && c.lastMessageStatus && (
            <Ticks status={c.lastMessageStatus} />
          )}
          <span class="row-preview">
            {plainText(c.lastMessagePreview ?? "")}
          </span>
          {closing && (
            <span class="badge warn" title={t("closingSoon")}>⏳</span>
          )}
          {c.unreadCount > 0 && (
            <span
              class="badge"
              aria-label={t("unreadCount", { n: c.unreadCount })}
            >
              {c.unreadCount}
            </span>
          )}
        </span>
      </a>
    </li>
  );
}
