// guard: the fixed order of checks for workspace calls (contract §3):
// route (404, by the router) → authentication (401) → rate limits (429) → permission (403) → the handler's body checks.
import { type Authenticator, requirePermission, type Caller } from "../auth/authenticate.ts";
import type { Permission } from "../auth/keys.ts";
import { type Sessions, sessionToken } from "../auth/sessions.ts";
import { unauthorized } from "../errors.ts";
import { clientIp, type CallKind, type RateLimiter } from "../limits/rate.ts";
import { type Handoff, withRateHeaders } from "./handoff.ts";
import type { Reply } from "./respond.ts";

/** Call is what a workspace handler works with once the gate has let it through. */
export interface Call<P> {
  request: Request;
  caller: Caller;
  params: P;
  /** the clock reading of this call, in epoch ms */
  now: number;
  /** where the answer's status and headers go (respond.ts json) */
  set: Reply;
  /** the Bun server when listening (null under app.handle): a stream lifts the idle timeout of its request through it */
  server: Server | null;
}

/** Server is the part of Bun's server a handler uses. */
export interface Server {
  requestIP(r: Request): { address: string } | null;
  timeout?(r: Request, seconds: number): void;
}

interface ElysiaContext<P> {
  request: Request;
  params: P;
  set: Reply;
  server: Server | null;
}

/** Gate admits workspace calls: who is calling, whether their buckets allow it, whether they may. */
export class Gate {
  constructor(
    private readonly auth: Authenticator,
    private readonly limiter: RateLimiter,
    readonly clock: () => number,
    private readonly trustProxyHops: number,
    /** how long an admitted call's body may take to arrive */
    readonly bodyTimeoutMs?: number,
    /** the web explorer's sign-ins (contract §12): a session cookie stands for its key on reads */
    readonly sessions?: Sessions,
    /** cluster mode: reads admitted here are answered on a copy of their partition, which does not admit them again */
    private readonly handoff?: Handoff,
  ) {}

  /**
   * guarded wraps a handler so that it only runs for an admitted caller holding `permission`; in a cluster a read runs
   * on a copy of the caller's partition unless `here` (what every node holds, such as alert records).
   */
  guarded<P, R extends string | Response = string>(permission: Permission, handler: (call: Call<P>) => R | Promise<R>, kind: CallKind = "other", here = false) {
    return ({ request, params, set, server }: ElysiaContext<P>) => {
      const now = this.clock();
      const admittedAs = this.handoff?.admittedAs?.(request);
      if (admittedAs !== undefined) {
        const caller = this.auth.authenticateHash(admittedAs, now); // a front admitted it: its buckets were spent there
        requirePermission(caller, permission);
        return handler({ request, caller, params, now, set, server });
      }
      const caller = this.callerOf(request, permission, now);
      const ip = this.limiter.limitsIps ? clientIp(server?.requestIP(request)?.address, request.headers.get("x-forwarded-for"), this.trustProxyHops) : "";
      // headers set here reach every later answer, errors included
      Object.assign(set.headers, this.limiter.admit({ keyId: caller.key.id, plan: caller.plan }, ip, kind, now));
      requirePermission(caller, permission);
      const elsewhere = permission === "logs:read" && !here ? this.handoff?.elsewhere?.(request, caller) : undefined;
      if (elsewhere) return elsewhere.then((r) => withRateHeaders(r, set.headers)) as Promise<R>;
      return handler({ request, caller, params, now, set, server });
    };
  }

  /**
   * callerOf authenticates by the key a request presents; without one, by the web explorer's session cookie, which stands
   * for its key only on reads, and on a POST only with `X-Sluice-UI: 1` (a header no cross-site form or plain link can send).
   */
  private callerOf(request: Request, permission: Permission, now: number) {
    const { headers } = request;
    const token = this.sessions && !this.auth.presents(headers) ? sessionToken(headers) : undefined;
    const viaSession = token !== undefined && permission === "logs:read" && (request.method === "GET" || headers.get("x-sluice-ui") === "1");
    if (token !== undefined && !viaSession && permission === "logs:read") {
      throw unauthorized("AUTH_MISSING_API_KEY", "a web explorer session authenticates a POST only with the header X-Sluice-UI: 1; or send an API key");
    }
    if (!viaSession) return this.auth.authenticate(headers, now);
    return this.auth.authenticateHash(this.sessions!.keyHashOf(token, now), now);
  }

  /** handOff answers an admitted read on a copy of the caller's partition (cluster mode); undefined: this Sluice answers it. */
  handOff(request: Request, caller: Caller): Promise<Response> | undefined {
    return this.handoff?.elsewhere?.(request, caller);
  }

  /** fromFront tells whether a cluster front admitted this request and handed it to this Sluice, a copy. */
  fromFront(request: Request): boolean {
    return this.handoff?.admittedAs?.(request) !== undefined;
  }

  /** stillValid tells whether the key of an admitted call is still valid now (not revoked, not expired): open streams recheck it. */
  stillValid(request: Request): boolean {
    const { headers } = request;
    try {
      const admittedAs = this.handoff?.admittedAs?.(request);
      if (admittedAs !== undefined) {
        this.auth.authenticateHash(admittedAs, this.clock()); // a front admitted it (by key or session): its key is what lasts
        return true;
      }
      const token = this.sessions && !this.auth.presents(headers) ? sessionToken(headers) : undefined;
      if (token !== undefined) this.auth.authenticateHash(this.sessions!.keyHashOf(token, this.clock()), this.clock());
      else this.auth.authenticate(headers, this.clock());
      return true;
    } catch {
      return false;
    }
  }
}
