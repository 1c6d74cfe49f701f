// Static index of every migration, so `deno compile` embeds them. Append only.
import type { Migration } from "kysely";
import * as m0001 from "./0001_initial.ts";

export const migrations: Record<string, Migration> = {
  "0001_initial": m0001,
};
