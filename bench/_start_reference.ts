/**
 * start.ts's reference, the one issue 7's table gives beside start to
 * ready and idle RSS ("Hono + node:sqlite server"): a Hono app on Deno.serve
 * with one node:sqlite connection (WAL) on a file, answering /readyz from it.
 * `deno run -A bench/_start_reference.ts <port> <database file>`.
 * A measuring instrument, not code to copy.
 */
import { Hono } from "hono";
import { DatabaseSync } from "node:sqlite";

const [port, file] = Deno.args;
const db = new DatabaseSync(file);
db.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
db.exec("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT)");
const one = db.prepare("SELECT 1 AS ok");

const app = new Hono();
app.get("/readyz", (c) => c.json({ status: one.get() ? "ready" : "down" }));

Deno.serve(
  { hostname: "127.0.0.1", port: Number(port), onListen() {} },
  app.fetch,
);
