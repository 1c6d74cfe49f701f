// Races for planned units (src/db/planned_writes.ts): another writer's
// statements land between a unit's reads and its batch, as another
// instance's would on one libSQL server.
import { GroupCommit } from "../../src/db/group_commit.ts";
import type { Container } from "../../src/container.ts";

/** The container's parts with a group commit of its own, as another instance on the same database has. */
export function anotherInstance(c: Container): Container {
  const { db, engine, dbBatch } = c;
  return {
    ...c,
    commits: new GroupCommit(db, { atomic: { db, engine, dbBatch } }),
  } as Container;
}

/**
 * A group commit whose first plan (or plan number `at`, from 0), once it
 * has read, lets `between` write before its batch (on libSQL only: on
 * SQLite the plan holds the write lock, and `between` would wait for it).
 * `plans` counts the plans made.
 */
export function racing(
  c: Container,
  between: () => Promise<void>,
  at = 0,
) {
  const race = {
    plans: 0,
    commits: {
      runPlanned: (plan, options) =>
        c.commits.runPlanned(async (db, writes) => {
          const finish = await plan(db, writes);
          if (race.plans++ === at && c.engine === "libsql") await between();
          return finish;
        }, options),
    } as Pick<GroupCommit, "runPlanned">,
  };
  return race;
}
