// Drafts in IndexedDB, one per agent and conversation: they survive a
// reload, a crash or a server restart, and never follow the agent to
// another conversation (the key names both).

const DB = "bm-panel";
const STORE = "drafts";
let opening: Promise<IDBDatabase> | undefined;

function open(): Promise<IDBDatabase> {
  opening ??= new Promise((resolve, reject) => {
    const req = indexedDB.open(DB, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
  return opening;
}

async function run<T>(
  mode: IDBTransactionMode,
  fn: (store: IDBObjectStore) => IDBRequest,
): Promise<T> {
  const db = await open();
  return await new Promise<T>((resolve, reject) => {
    const req = fn(db.transaction(STORE, mode).objectStore(STORE));
    req.onsuccess = () => resolve(req.result as T);
    req.onerror = () => reject(req.error);
  });
}

export function draftKey(agentId: string, conversationId: string): string {
  return `${agentId}:${conversationId}`;
}

export async function loadDraft(key: string): Promise<string> {
  return (await run<string | undefined>("readonly", (s) => s.get(key))) ?? "";
}

export async function saveDraft(key: string, text: string): Promise<void> {
  await run("readwrite", (s) => text ? s.put(text, key) : s.delete(key));
}
