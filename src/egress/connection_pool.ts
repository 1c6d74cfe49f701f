import type { Connection } from "./connection.ts";

/** Idle keep-alive connections per `${tls}|${ip}|${port}|${servername}`, newest first out. */
export class ConnectionPool {
  #idle = new Map<string, Connection[]>();
  #maxIdle: number;
  #idleTimeoutMs: number;
  #closed = false;

  constructor(options: { maxIdlePerOrigin: number; idleTimeoutMs: number }) {
    this.#maxIdle = options.maxIdlePerOrigin;
    this.#idleTimeoutMs = options.idleTimeoutMs;
  }

  /** An idle connection for the key, taken out of the pool, or undefined. */
  take(key: string): Connection | undefined {
    const list = this.#idle.get(key);
    if (list === undefined) return undefined;
    const conn = list.pop();
    if (list.length === 0) this.#idle.delete(key);
    if (conn !== undefined) {
      clearTimeout(conn.idleTimer);
      conn.idle = false;
    }
    return conn;
  }

  /** Keeps a connection for reuse, or closes it when the pool is full or closed. */
  put(conn: Connection): void {
    let list = this.#idle.get(conn.key);
    if (this.#closed || conn.closed || (list?.length ?? 0) >= this.#maxIdle) {
      conn.close();
      return;
    }
    if (list === undefined) this.#idle.set(conn.key, list = []);
    list.push(conn);
    conn.idle = true;
    conn.idleTimer = setTimeout(() => this.#evict(conn), this.#idleTimeoutMs);
    // A server closing the idle socket (or talking out of turn) evicts it now.
    conn.watch(() => this.#evict(conn));
  }

  /** Closes every idle connection and stops pooling. */
  close(): void {
    this.#closed = true;
    for (const list of this.#idle.values()) {
      for (const conn of list) {
        clearTimeout(conn.idleTimer);
        conn.idle = false;
        conn.close();
      }
    }
    this.#idle.clear();
  }

  #evict(conn: Connection): void {
    clearTimeout(conn.idleTimer);
    conn.idle = false;
    const list = this.#idle.get(conn.key);
    const at = list?.indexOf(conn) ?? -1;
    if (list !== undefined && at !== -1) {
      list.splice(at, 1);
      if (list.length === 0) this.#idle.delete(conn.key);
    }
    conn.close();
  }
}
