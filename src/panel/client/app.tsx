// The page: the list and the open conversation side by side (one pane on a
// phone), the connection indicator, keyboard shortcuts and their help.
import { useEffect, useRef } from "preact/hooks";
import { t } from "./i18n.ts";
import { changed, store, useStore } from "./store.ts";
import { ConversationList } from "./list.tsx";
import { ConversationView } from "./thread.tsx";
import { ResolveView } from "./resolve.tsx";
import { navigate } from "./router.ts";

const SHORTCUTS: [string, Parameters<typeof t>[0]][] = [
  ["j", "shortcutNext"],
  ["k", "shortcutPrev"],
  ["r", "shortcutReply"],
  ["t", "shortcutTemplate"],
  ["/", "shortcutSearch"],
  ["?", "shortcutHelp"],
  ["Esc", "shortcutEscape"],
];

function typing(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return !!el && (el.isContentEditable ||
    ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName));
}

function move(step: number) {
  const list = store.list;
  if (list.length === 0) return;
  const current = store.route.name === "conversation"
    ? list.findIndex((c) => c.id === (store.route as { id: string }).id)
    : -1;
  const next = list[Math.min(list.length - 1, Math.max(0, current + step))];
  if (next) {
    navigate(`/panel/c/${next.id}`);
    queueMicrotask(() =>
      document.querySelector<HTMLElement>(`[data-conversation="${next.id}"]`)
        ?.focus()
    );
  }
}

function onKey(e: KeyboardEvent) {
  if (e.key === "Escape") {
    if (store.helpOpen || store.templateOpen) return; // the dialog closes itself
    if (typing(e.target)) return (e.target as HTMLElement).blur();
    if (store.route.name !== "list") navigate("/panel");
    return;
  }
  if (typing(e.target) || e.ctrlKey || e.metaKey || e.altKey) {
    if (e.altKey && e.key === "ArrowDown") move(1);
    if (e.altKey && e.key === "ArrowUp") move(-1);
    return;
  }
  const actions: Record<string, () => void> = {
    j: () => move(1),
    k: () => move(-1),
    r: () => document.getElementById("composer-text")?.focus(),
    t: () => {
      if (store.route.name !== "conversation") return;
      store.templateOpen = true;
      changed();
    },
    "/": () => document.getElementById("search")?.focus(),
    "?": () => {
      store.helpOpen = true;
      changed();
    },
  };
  const action = actions[e.key];
  if (action) {
    e.preventDefault();
    action();
  }
}

function Help() {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => dialog.current?.showModal(), []);
  const close = () => {
    store.helpOpen = false;
    changed();
  };
  return (
    <dialog
      ref={dialog}
      class="dialog"
      aria-labelledby="help-title"
      onClose={close}
    >
      <h2 id="help-title">{t("help")}</h2>
      <dl class="shortcuts">
        {SHORTCUTS.map(([key, label]) => (
          <>
            <dt>
              <kbd>{key}</kbd>
            </dt>
            <dd>{t(label)}</dd>
          </>
        ))}
      </dl>
      <button type="button" class="primary" onClick={close}>
        {t("close")}
      </button>
    </dialog>
  );
}

export function App() {
  const s = useStore();
  useEffect(() => {
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, []);
  const route = s.route;
  return (
    <div class={`app route-${route.name}`}>
      <header class="topbar">
        <h1>{t("inbox")}</h1>
        <p
          class={`connection ${s.connection}`}
          role="status"
          aria-live="polite"
        >
          <span aria-hidden="true" class="dot" />
          {t(s.connection)}
        </p>
        <span class="who">{t("signedInAs", { name: s.boot.agent.name })}</span>
        <button
          type="button"
          class="icon"
          aria-label={t("help")}
          onClick={() => {
            store.helpOpen = true;
            changed();
          }}
        >
          ?
        </button>
        <form method="post" action="/panel/logout">
          <button type="submit" class="secondary">{t("signOut")}</button>
        </form>
      </header>
      {s.error && (
        <p class="error banner" role="alert">
          {t("error", { message: s.error })}
          <button
            type="button"
            class="icon"
            aria-label={t("close")}
            onClick={() => {
              store.error = "";
              changed();
            }}
          >
            ×
          </button>
        </p>
      )}
      <main class="panes">
        <ConversationList />
        {route.name === "conversation" && (
          <ConversationView id={route.id} key={route.id} />
        )}
        {route.name === "resolve" && <ResolveView query={route.query} />}
        {route.name === "list" && (
          <section
            class="thread-pane placeholder"
            aria-label={t("conversations")}
          >
            <p class="muted empty">{t("selectConversation")}</p>
          </section>
        )}
      </main>
      {s.helpOpen && <Help />}
    </div>
  );
}
