// waiting: a cluster node started while NATS cannot be reached (contract §13; machines reboot in any order). It tries
// to join again with a bounded backoff and, meanwhile, listens: /healthz 200, /readyz 503 saying why, any other call
// 503 with Retry-After, as a joined node answers once NATS goes away (link.ts).
import { errorReply, requestUrl } from "../http/respond.ts";
import { unavailable, unreachable } from "./link.ts";

/** the first pause between tries to join, doubled after each failure up to LAST_RETRY_MS: NATS coming back is joined within seconds */
const FIRST_RETRY_MS = 250;
const LAST_RETRY_MS = 4000;

/** JoinOptions are what joinWhenReachable reports to and asks of the server that runs it. */
export interface JoinOptions {
  log: (line: Record<string, unknown>) => void;
  /** called once, after the first failed try, with the last failure's message as it changes: the node listens meanwhile */
  waiting: (why: () => string) => void;
  /** true once the process was told to stop: no try after it */
  stopped: () => boolean;
}

/** joinWhenReachable runs start until it succeeds, pausing between tries; undefined if the process was told to stop first. */
export async function joinWhenReachable<T extends { stop(): Promise<void> }>(start: () => Promise<T>, o: JoinOptions): Promise<T | undefined> {
  let last = "";
  for (let attempt = 0; !o.stopped(); attempt++) {
    try {
      const node = await start();
      if (!o.stopped()) return node;
      await node.stop();
      return undefined;
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      const pause = Math.min(LAST_RETRY_MS, FIRST_RETRY_MS * 2 ** attempt);
      // one line a cause, not one a try: a node can wait for hours
      if (why !== last) o.log({ level: "warn", msg: `cannot join the cluster yet; trying again every ${LAST_RETRY_MS / 1000} s at most`, error: why });
      last = why;
      if (attempt === 0) o.waiting(() => `${last}; not joined yet, trying again`);
      await Bun.sleep(pause);
    }
  }
  return undefined;
}

/**
 * listenWaiting answers on the node's address until it joins. It shares its port (reusePort) with the node's own
 * server, which listens beside it before this one stops, so no call is refused between the two; every answer closes
 * its connection, so no client keeps one to this server past its stop.
 */
export function listenWaiting(listen: { port: number; hostname: string }, urls: string[], why: () => string) {
  return Bun.serve({
    ...listen,
    reusePort: true,
    fetch(request) {
      const headers: Record<string, string> = { "x-request-id": crypto.randomUUID(), connection: "close" };
      const { pathname } = requestUrl(request);
      if (pathname === "/healthz" || pathname === "/livez") return Response.json({ status: "ok" }, { headers });
      if (pathname === "/readyz") return Response.json(unreachable(urls, why()), { status: 503, headers });
      const set = { headers, status: 503 };
      const body = errorReply(set, unavailable("this node has not joined the cluster yet"), headers["x-request-id"]);
      return new Response(body, { status: Number(set.status), headers });
    },
  });
}
