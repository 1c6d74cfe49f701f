// The panel's IndexedDB: drafts (one per agent and conversation) and the
// outbox (sends not answered yet). Both survive a reload, a crash or a
// server restart; nothing of a session or a credential is kept here.

const DB = "bm-panel";
export type StoreName = "drafts" | "outbox";
let opening: Promise<IDBDatabase> | undefined;

function open(): Promise<IDBDatabase> {
  opening ??= new Promise((resolve, reject) => {
    const req = indexedDB.open(DB, 2);
    req.onupgradeneeded = () => {
      for (const name of ["drafts", "outbox"] as const) {
        if (!req.result.objectStoreNames.contains(name)) {
          req.result.createObjectStore(name);
        }
      }
    };
    req.onsuccess = () => {
      // A newer panel in another tab upgrades the database: let it.
      req.result.onversionchange = () => {
        req.result.close();
        opening = undefined;
      };
      resolve(req.result);
    };
    req.onerror = () => reject(req.error);
    // An older panel in another tab still holds the previous version open.
    req.onblocked = () => {
      opening = undefined;
      reject(new Error("IndexedDB is held by an older panel in another tab"));
    };
  });
  return opening;
}

/** Runs one request in a transaction of its own and answers its result. */
export async function run<T>(
  name: StoreName,
  mode: IDBTransactionMode,
  fn: (store: IDBObjectStore) => IDBRequest,
): Promise<T> {
  const db = await open();
  return await new Promise<T>((resolve, reject) => {
    const tx = db.transaction(name, mode);
    const req = fn(tx.objectStore(name));
    // Settled when the transaction commits: a write is on disk by then.
    tx.oncomplete = () => resolve(req.result as T);
    tx.onerror = () => reject(tx.error ?? req.error);
    tx.onabort = () => reject(tx.error ?? req.error);
  });
}
