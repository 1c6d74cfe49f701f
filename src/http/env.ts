import type { Principal } from "../domain/accounts/account.ts";
import type { Logger } from "../log.ts";

/** Context variables every route can read. */
export interface AppEnv {
  Variables: {
    requestId: string;
    log: Logger;
    principal: Principal;
    /** Set first, for every request (src/http/client_address.ts). */
    client: ClientAddress;
  };
}

/** Who sent a request, as far as this server can tell. */
export interface ClientAddress {
  /** The client's address (canonical text), or "unknown" when there is no socket (in-process requests). */
  address: string;
  /**
   * Whether the address tells clients apart: TRUSTED_PROXIES is set and the
   * address is not one of the proxies. Without it every request behind a
   * proxy has the proxy's address, so nothing may be decided per address.
   */
  distinct: boolean;
}
