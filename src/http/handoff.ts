// handoff: in a cluster, the node a client called admits its reads (authentication, that node's rate limits,
// permission: contract §3 order, §13 limits per front node) and another Sluice, a copy of the caller's partition,
// answers them without admitting them again.
import type { Caller } from "../auth/authenticate.ts";

/** Handoff is what a Gate asks of a cluster: where an admitted read runs, and whether a read was admitted elsewhere. */
export interface Handoff {
  /** elsewhere answers an admitted read on a copy of its partition; undefined: this Sluice answers it */
  elsewhere?(request: Request, caller: Caller): Promise<Response> | undefined;
  /** admittedAs is the hash of the key a front admitted this request as; undefined: admit it here */
  admittedAs?(request: Request): string | undefined;
}

/** withRateHeaders is `response` with the front's X-RateLimit-* headers: the bucket that admitted it. */
export function withRateHeaders(response: Response, set: Record<string, unknown>): Response {
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(set)) if (name.startsWith("x-ratelimit-")) headers.set(name, String(value));
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}
