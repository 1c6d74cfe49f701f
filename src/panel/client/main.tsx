// The inbox panel's client: reads the boot data the server put in the page,
// loads the list, follows the live stream, and renders.
import "./panel.css";
import { render } from "preact";
import { App } from "./app.tsx";
import { lang } from "./i18n.ts";
import { startLive } from "./live.ts";
import { restoreOutbox, retryOutbox } from "./outbox.ts";
import { startRouter } from "./router.ts";
import {
  applyEvent,
  changed,
  loadAgents,
  setServerTime,
  store,
} from "./store.ts";
import type { Boot } from "./types.ts";

const boot: Boot = JSON.parse(document.getElementById("boot")!.textContent!);
store.boot = boot;
setServerTime(boot.serverTime);
document.documentElement.lang = lang;
startRouter();
// The stream starts after the cursor of the page's making, so nothing that
// happens while the list loads is missed.
startLive({
  agentId: boot.agent.id,
  cursor: boot.feedCursor,
  onEvent: (event) => {
    if (event.type === "hello") {
      setServerTime(String(event.data.serverTime));
      retryOutbox();
      return;
    }
    applyEvent(event.type, event.data);
  },
  onStatus: (status) => {
    store.connection = status;
    changed();
  },
});
store.list = boot.list.data;
store.listCursor = boot.list.cursor;
store.listHasMore = boot.list.hasMore;
render(<App />, document.getElementById("app")!);
requestAnimationFrame(() => performance.mark("list-rendered"));
loadAgents().catch(() => {});
// Sends a reload or a crash left unanswered: posted again with their keys.
restoreOutbox().then(retryOutbox, () => {});
