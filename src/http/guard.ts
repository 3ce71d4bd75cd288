// guard: the fixed order of checks for workspace calls (contract §3):
// route (404, by the router) → authentication (401) → rate limits (429) → permission (403) → the handler's body checks.
import { Authenticator, requirePermission, type Caller } from "../auth/authenticate.ts";
import type { Permission } from "../auth/keys.ts";

export type WorkspaceHandler<P> = (request: Request, caller: Caller, params: P) => Response | Promise<Response>;

/** guarded wraps a workspace handler so that it only runs for an authenticated caller holding `permission`. */
export function guarded<P>(auth: Authenticator, permission: Permission, handler: WorkspaceHandler<P>) {
  return ({ request, params }: { request: Request; params: P }) => {
    const caller = auth.authenticate(request.headers);
    // Rate limits (429) belong exactly here, between authentication and permission: see limits/.
    requirePermission(caller, permission);
    return handler(request, caller, params);
  };
}
