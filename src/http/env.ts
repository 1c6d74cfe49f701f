import type { Principal } from "../domain/accounts/account.ts";
import type { Logger } from "../log.ts";

/** Context variables every route can read. */
export interface AppEnv {
  Variables: {
    requestId: string;
    log: Logger;
    principal: Principal;
  };
}
