// pipelining: a write runs only if its answer can still be delivered. Bun.serve closes a connection when a request
// arrives on it while the one ahead is still being answered (HTTP pipelining), and the answer ahead is lost with it:
// a write that ran anyway would be stored unanswered, and a client that retries it would store it twice.
import { ClientClosed } from "../errors.ts";
import { requestUrl } from "./respond.ts";

const READS = new Set(["GET", "HEAD", "OPTIONS"]);
// these store nothing: held, they would make Bun close connections it answers whole when they answer at once
const READ_ONLY_POSTS = new Set(["/api/v1/workspace/logs/validate", "/api/v1/workspace/logs/query"]);

/**
 * holdWrite makes a write wait one event-loop turn, by which Bun has parsed the rest of the read its head came in, and
 * drops it if Bun closed its connection meanwhile; a request pipelined behind a longer body fails that body's read.
 * One that arrives while the write commits still closes the connection on a stored write: Bun.serve offers no way to
 * stop that, and only node:http, at about an eighth more CPU a request, answers pipelined requests in order.
 */
export async function holdWrite({ request }: { request: Request }): Promise<void> {
  if (READS.has(request.method) || READ_ONLY_POSTS.has(requestUrl(request).pathname)) return;
  await new Promise((turn) => setImmediate(turn));
  if (request.signal.aborted) throw new ClientClosed("a request was pipelined behind this write: Bun closed the connection, so the write was not run");
}
