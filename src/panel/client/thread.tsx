// A conversation: header with its Status and Assign controls, the 24-hour
// window counted down live, the messages oldest first (ticks, media,
// quoted replies, reactions, edits and deletions), the composer and the
// contact panel.
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "./api.ts";
import {
  changed,
  conversation,
  loadThread,
  now,
  refreshConversation,
  reportError,
  store,
  useStore,
} from "./store.ts";
import { clockTime, duration, fullTime, t } from "./i18n.ts";
import { Ticks } from "./ticks.tsx";
import { Formatted } from "./format.tsx";
import { plainText } from "./marks.ts";
import { Composer } from "./composer.tsx";
import { ContactPanel } from "./contact.tsx";
import { contactName } from "./list.tsx";
import { navigate } from "./router.ts";
import { sendMessage } from "./outbox.ts";
import type { Conversation, Message } from "./types.ts";

/**
 * The window of a conversation, on the server's clock; the whole page
 * renders again at its end and every 30 s before it (the banner and the
 * composer always agree).
 */
export function useWindow(c: Conversation | undefined) {
  const expires = c?.serviceWindowExpiresAt
    ? Date.parse(c.serviceWindowExpiresAt)
    : undefined;
  useEffect(() => {
    if (expires === undefined) return;
    const left = expires - now();
    const timer = setTimeout(
      changed,
      left > 0 ? Math.min(left + 50, 30_000) : 30_000,
    );
    return () => clearTimeout(timer);
  });
  if (expires === undefined) return { open: false, left: 0, never: true };
  const left = expires - now();
  return { open: left > 0, left, never: false };
}

export function ConversationView({ id }: { id: string }) {
  const s = useStore();
  const c = conversation(id);
  const th = s.threads.get(id);
  useEffect(() => {
    loadThread(id).catch(reportError);
  }, [id]);
  const unread = c?.unreadCount ?? 0;
  useEffect(() => {
    // A read receipt only when someone is looking: visible and focused.
    const mark = () => {
      if (
        document.visibilityState === "visible" && document.hasFocus() &&
        unread > 0
      ) {
        api("POST", `/api/v2/conversations/${id}/read`).catch(() => {});
      }
    };
    mark();
    addEventListener("focus", mark);
    document.addEventListener("visibilitychange", mark);
    return () => {
      removeEventListener("focus", mark);
      document.removeEventListener("visibilitychange", mark);
    };
  }, [id, unread]);
  if (!c) {
    return (
      <section class="thread-pane" aria-busy="true">
        <p class="muted empty">…</p>
      </section>
    );
  }
  return (
    <section class="thread-pane" aria-labelledby="thread-heading">
      <header class="thread-header">
        <button
          type="button"
          class="back"
          aria-label={t("back")}
          onClick={() =>
            history.length > 1 ? history.back() : navigate("/panel")}
        >
          ←
        </button>
        <h2 id="thread-heading">{contactName(c)}</h2>
        <Controls c={c} />
      </header>
      <WindowBanner c={c} />
      <div class="thread-body">
        <Messages
          c={c}
          messages={th?.messages ?? []}
          hasMore={th?.hasMore ?? false}
        />
        <ContactPanel c={c} />
      </div>
      <Composer c={c} key={c.id} />
    </section>
  );
}

function Controls({ c }: { c: Conversation }) {
  const s = store;
  const me = s.boot.agent;
  const patch = async (body: Record<string, unknown>) => {
    try {
      const { data } = await api<{ data: Conversation }>(
        "PATCH",
        `/api/v2/conversations/${c.id}`,
        { body },
      );
      Object.assign(c, data);
      changed();
      void refreshConversation(c.id);
    } catch (err) {
      reportError(err);
    }
  };
  const others = me.visibility === "all"
    ? s.agents.filter((a) => a.id !== me.id)
    : [];
  return (
    <div class="controls">
      <label>
        <span class="visually-hidden">{t("status")}</span>
        <select
          aria-label={t("status")}
          value={c.status}
          onChange={(e) =>
            void patch({ status: (e.target as HTMLSelectElement).value })}
        >
          {(["open", "pending", "resolved", "closed"] as const).map((st) => (
            <option value={st}>{t(st)}</option>
          ))}
        </select>
      </label>
      <label>
        <span class="visually-hidden">{t("assign")}</span>
        <select
          aria-label={t("assign")}
          value={c.assignedTo ?? ""}
          onChange={(e) => {
            const v = (e.target as HTMLSelectElement).value;
            void patch({ assignedTo: v || null });
          }}
        >
          {(me.visibility === "all" || c.assignedTo === null) && (
            <option value="">{t("nobody")}</option>
          )}
          <option value={me.id}>{t("me")} ({me.name})</option>
          {others.map((a) => <option value={a.id} key={a.id}>{a.name}</option>)}
          {c.assignedTo && c.assignedTo !== me.id &&
            !others.some((a) => a.id === c.assignedTo) && (
            <option value={c.assignedTo}>{c.assignedTo.slice(0, 8)}</option>
          )}
        </select>
      </label>
    </div>
  );
}

function WindowBanner({ c }: { c: Conversation }) {
  const w = useWindow(c);
  if (w.never) {
    return (
      <p id="window-state" class="window closed" role="status">
        {t("noWindow")}
      </p>
    );
  }
  if (!w.open) {
    return (
      <p id="window-state" class="window closed" role="status">
        {t("windowClosed")}
      </p>
    );
  }
  const closing = w.left <= 2 * 3600_000;
  return (
    <p
      id="window-state"
      class={`window ${closing ? "closing" : "open"}`}
      role="status"
    >
      {t(closing ? "windowClosing" : "windowOpen", { time: duration(w.left) })}
    </p>
  );
}

function Messages(
  { c, messages, hasMore }: {
    c: Conversation;
    messages: Message[];
    hasMore: boolean;
  },
) {
  const id = c.id;
  // Reacting needs the window open, as a text does.
  const canReact = useWindow(c).open;
  const react = (waMessageId: string, emoji: string) =>
    sendMessage(c, {
      type: "reaction",
      reaction: { message_id: waMessageId, emoji },
    }).catch(reportError);
  const log = useRef<HTMLDivElement>(null);
  const last = messages.at(-1)?.id;
  useEffect(() => {
    const el = log.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [id, last]);
  // Reactions show on the message they react to, not as bubbles.
  const reactions = new Map<string, Map<string, string>>();
  for (const m of messages) {
    // A reaction that failed never reached the customer: not shown as made.
    if (m.type !== "reaction" || m.status === "failed") continue;
    const target = String(m.content.message_id ?? "");
    const emoji = String(m.content.emoji ?? "");
    const byWho = reactions.get(target) ?? new Map<string, string>();
    if (emoji) byWho.set(m.direction, emoji);
    else byWho.delete(m.direction);
    reactions.set(target, byWho);
  }
  const byWamid = new Map(
    messages.filter((m) => m.waMessageId).map((m) => [m.waMessageId!, m]),
  );
  const byId = new Map(messages.map((m) => [m.id, m]));
  return (
    <div
      class="messages"
      ref={log}
      role="log"
      aria-live="polite"
      aria-label={t("messages")}
    >
      {hasMore && (
        <button
          type="button"
          class="more"
          onClick={() => loadThread(id, true).catch(reportError)}
        >
          {t("loadOlder")}
        </button>
      )}
      {messages.filter((m) => m.type !== "reaction").map((m) => (
        <Bubble
          key={m.id}
          m={m}
          quoted={m.context
            ? (m.context.messageId && byId.get(m.context.messageId)) ||
              byWamid.get(m.context.waMessageId)
            : undefined}
          reactions={m.waMessageId ? reactions.get(m.waMessageId) : undefined}
          onReact={canReact && m.direction === "inbound" && m.waMessageId &&
              !m.deletedAt
            ? (emoji) => react(m.waMessageId!, emoji)
            : undefined}
        />
      ))}
    </div>
  );
}

/** A short text for a message (quotes, previews). */
export function summaryOf(m: Message): string {
  const content = m.content;
  if (typeof content.text === "string") return content.text;
  if (typeof content.caption === "string" && content.caption) {
    return content.caption;
  }
  if (m.type === "template") {
    return t("templateMessage", { name: String(content.name ?? "") });
  }
  const known = ["image", "video", "audio", "document", "sticker", "location"];
  return known.includes(m.type) ? t(m.type as "image") : t("unsupported");
}

function Bubble(
  { m, quoted, reactions, onReact }: {
    m: Message;
    quoted: Message | undefined | false | null;
    reactions: Map<string, string> | undefined;
    /** Set when the agent may react to this message. */
    onReact?: (emoji: string) => void;
  },
) {
  const out = m.direction === "outbound";
  return (
    <article
      class={`bubble ${out ? "out" : "in"}${m.deletedAt ? " deleted" : ""}`}
      data-message={m.id}
    >
      {m.context && (
        <blockquote class="quote">
          <span class="visually-hidden">{t("replyTo")}:</span>
          {quoted ? plainText(summaryOf(quoted)) : t("unknownQuoted")}
        </blockquote>
      )}
      {m.deletedAt && <p class="deleted-note" role="note">{t("deleted")}</p>}
      <Body m={m} />
      {m.edits && m.edits.length > 0 && (
        <details class="edits">
          <summary>{t("edited")}</summary>
          <ul aria-label={t("previousVersions")}>
            {m.edits.map((e) => (
              <li>
                <time dateTime={e.editedAt}>{clockTime(e.editedAt)}</time>{" "}
                {String(
                  e.previousContent.text ?? e.previousContent.caption ?? "",
                )}
              </li>
            ))}
          </ul>
        </details>
      )}
      <footer class="meta">
        {onReact && (
          <ReactControl mine={reactions?.get("outbound")} onReact={onReact} />
        )}
        <time dateTime={m.createdAt} title={fullTime(m.createdAt)}>
          {clockTime(m.createdAt)}
        </time>
        {out && (
          <Ticks status={m.status} error={m.errorMessage} pending={m.pending} />
        )}
        {out && m.status === "failed" && m.errorMessage && (
          <span class="error-text">{m.errorMessage}</span>
        )}
      </footer>
      {reactions && reactions.size > 0 && (
        <p class="reactions">
          <span class="visually-hidden">{t("reactions")}:</span>
          {[...reactions.entries()].map(([who, e]) => (
            <span
              key={who}
              title={t(who === "outbound" ? "yourReaction" : "theirReaction")}
            >
              {e}
            </span>
          ))}
        </p>
      )}
    </article>
  );
}

const EMOJI = ["👍", "❤️", "😂", "😮", "😢", "🙏"];

/**
 * "React": a few emoji to react with; the one the agent already chose is
 * pressed, and choosing it again takes the reaction back (an empty emoji).
 */
function ReactControl(
  { mine, onReact }: { mine: string | undefined; onReact(e: string): void },
) {
  const [open, setOpen] = useState(false);
  const toggle = useRef<HTMLButtonElement>(null);
  const close = () => {
    setOpen(false);
    toggle.current?.focus();
  };
  return (
    <div class="react">
      <button
        type="button"
        ref={toggle}
        class="react-toggle"
        aria-expanded={open}
        onClick={() => setOpen(!open)}
      >
        {t("react")}
      </button>
      {open && (
        <div
          role="group"
          aria-label={t("react")}
          class="react-menu"
          onKeyDown={(e) => {
            if (e.key === "Escape") close();
          }}
        >
          {EMOJI.map((e) => (
            <button
              type="button"
              key={e}
              aria-label={t("reactWith", { emoji: e })}
              aria-pressed={mine === e}
              onClick={() => {
                close();
                onReact(mine === e ? "" : e);
              }}
            >
              {e}
            </button>
          ))}
        </div>
      )}
    </div>
  );
}

function Body({ m }: { m: Message }) {
  const c = m.content;
  const caption = typeof c.caption === "string" && c.caption
    ? (
      <p class="caption">
        <Formatted text={c.caption} />
      </p>
    )
    : null;
  if (m.type === "text") {
    return (
      <p class="text">
        <Formatted text={String(c.text ?? "")} />
      </p>
    );
  }
  if (["image", "sticker", "video", "audio", "document"].includes(m.type)) {
    return <>{<Media m={m} />}{caption}</>;
  }
  if (m.type === "location") {
    return (
      <p class="text">
        📍 {String(c.name ?? "")} {String(c.latitude ?? "")},{" "}
        {String(c.longitude ?? "")}
      </p>
    );
  }
  if (m.type === "button" && typeof c.text === "string") {
    return <p class="text">{c.text}</p>;
  }
  if (m.type === "interactive") {
    const reply = (c.button_reply ?? c.list_reply) as
      | { title?: string }
      | undefined;
    if (reply?.title) return <p class="text">{reply.title}</p>;
  }
  return <p class="text muted">{summaryOf(m)}</p>;
}

/** Media with an explicit state: downloading, ready (a preview), or failed. */
function Media({ m }: { m: Message }) {
  const label = t(m.type as "image");
  if (m.mediaId) {
    const src = `/panel/media/${m.mediaId}`;
    const name = String(m.content.filename ?? m.content.caption ?? label);
    if (m.type === "image" || m.type === "sticker") {
      return (
        <img
          class="media"
          src={src}
          alt={String(m.content.caption ?? label)}
          loading="lazy"
        />
      );
    }
    if (m.type === "video") {
      return <video class="media" src={src} controls preload="metadata" />;
    }
    if (m.type === "audio") {
      return <audio src={src} controls preload="metadata" />;
    }
    return (
      <a class="file" href={src} download={name}>{t("download", { name })}</a>
    );
  }
  if (m.mediaError) {
    return (
      <p class="media-state failed" role="status">
        ⚠ {t("mediaFailed")}: {m.mediaError}
      </p>
    );
  }
  const link = typeof m.content.link === "string" ? m.content.link : "";
  if (m.direction === "outbound" && link) {
    return /^https?:\/\//.test(link)
      ? (
        <a class="file" href={link} target="_blank" rel="noopener noreferrer">
          {label}: {link}
        </a>
      )
      : <p class="text">{label}</p>;
  }
  return <p class="media-state downloading" role="status">{t("downloading")}
  </p>;
}
