// The URL is the source of truth: /panel (the list), /panel/c/:id (a
// conversation), /panel/conversations/resolve?… (the spec's panel URL). On
// a phone only one pane shows, so the browser's back gesture goes from a
// conversation back to the list.
import { changed, type Route, store } from "./store.ts";

export function parseRoute(location: Location): Route {
  const path = location.pathname;
  const conversation = /^\/panel\/c\/([0-9a-f-]{36})$/.exec(path);
  if (conversation) return { name: "conversation", id: conversation[1]! };
  if (path === "/panel/conversations/resolve") {
    return { name: "resolve", query: location.search };
  }
  return { name: "list" };
}

export function navigate(path: string, replace = false): void {
  if (replace) history.replaceState(null, "", path);
  else history.pushState(null, "", path);
  store.route = parseRoute(location);
  changed();
}

export function startRouter(): void {
  store.route = parseRoute(location);
  addEventListener("popstate", () => {
    store.route = parseRoute(location);
    changed();
  });
}
