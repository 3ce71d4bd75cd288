// audit: every NATS server's own view of each partition stream (first sequence, last sequence, message count),
// read from its monitoring port (`/jsz`, the `http:` setting of nats-server), compared server by server. The
// leader's stream info only tells how far each replica has acknowledged, not what it holds; a replica brought back
// with a gap or a different first sequence is seen only in its own view. A server that does not answer is unknown,
// and unknown is a problem: it is never taken as agreeing.

/** StreamView is one server's state of one stream. */
export interface StreamView {
  first: number;
  last: number;
  messages: number;
}

/** ServerView is what one monitoring URL answered: the server's name and its streams, or why it could not be read. */
export interface ServerView {
  url: string;
  server?: string;
  streams?: Map<string, StreamView>;
  error?: string;
}

/** ExpectedStream is a stream with the servers that should hold a replica of it (its leader's peer list). */
export interface ExpectedStream {
  stream: string;
  servers: string[];
  /** a partition log never deletes inside it; a KV bucket's stream drops a key's older values, so gaps are its normal state */
  gapless: boolean;
}

/** ReplicaFigures is one server's figures of a stream in the status output (null: unknown). */
export interface ReplicaFigures {
  server: string;
  first: number | null;
  last: number | null;
  messages: number | null;
}

/** StreamAudit is a stream's figures on every server that should hold it, and what is wrong with them. */
export interface StreamAudit {
  stream: string;
  servers: ReplicaFigures[];
  problems: string[];
}

interface JszReply {
  account_details?: { stream_detail?: { name: string; state: { messages: number; first_seq: number; last_seq: number } }[] }[];
}

/** readServer asks one server's monitoring port for its name (/varz) and its streams' state (/jsz), within `timeoutMs`. */
export async function readServer(url: string, timeoutMs: number): Promise<ServerView> {
  const base = url.replace(/\/+$/, "");
  const get = async <T>(path: string): Promise<T> => {
    const r = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(timeoutMs) });
    if (!r.ok) throw new Error(`${path} answered ${r.status}`);
    return (await r.json()) as T;
  };
  try {
    const [varz, jsz] = await Promise.all([
      get<{ server_name?: string }>("/varz"),
      get<JszReply>("/jsz?accounts=true&streams=true&consumers=false&config=false"),
    ]);
    const streams = new Map<string, StreamView>();
    for (const account of jsz.account_details ?? [])
      for (const s of account.stream_detail ?? []) streams.set(s.name, { first: s.state.first_seq, last: s.state.last_seq, messages: s.state.messages });
    if (!varz.server_name) return { url, error: "its /varz has no server_name" };
    return { url, server: varz.server_name, streams };
  } catch (e) {
    return { url, error: e instanceof Error && e.name === "TimeoutError" ? `no answer within ${timeoutMs} ms` : String(e) };
  }
}

/** span is the message count a stream without gaps holds from first to last. */
const span = (v: StreamView) => (v.last === 0 || v.last < v.first ? 0 : v.last - v.first + 1);
/** an empty stream's first sequence is 0 on one server and last + 1 on another (after a restart or a purge): the same state */
const firstOf = (v: StreamView) => (v.messages === 0 ? v.last + 1 : v.first);
const same = (a: StreamView, b: StreamView) => firstOf(a) === firstOf(b) && a.last === b.last && a.messages === b.messages;
const text = (v: StreamView) => `first ${v.first}, last ${v.last}, ${v.messages} messages`;

/**
 * auditStreams compares each stream's figures on every server that should hold it. Problems, each naming the server
 * and the stream: a server whose monitoring port did not answer or that no given URL belongs to (unknown), a server
 * missing the stream, a gapless stream whose count is not last − first + 1 (a gap), and servers whose figures differ.
 */
export function auditStreams(expected: ExpectedStream[], views: ServerView[]): StreamAudit[] {
  const byName = new Map(views.filter((v) => v.server).map((v) => [v.server!, v]));
  const silent = views.filter((v) => !v.server);
  const unknown =
    silent.length > 0
      ? `its monitoring port did not answer (${silent.map((v) => `${v.url}: ${v.error}`).join("; ")})`
      : "no monitoring URL given belongs to it";
  return expected.map(({ stream, servers, gapless }) => {
    const problems: string[] = [];
    const figures: ReplicaFigures[] = [];
    const seen: { server: string; view: StreamView }[] = [];
    for (const server of [...servers].sort()) {
      const view = byName.get(server)?.streams?.get(stream);
      figures.push({ server, first: view?.first ?? null, last: view?.last ?? null, messages: view?.messages ?? null });
      if (!byName.has(server)) problems.push(`server ${server}, stream ${stream}: unknown, ${unknown}`);
      else if (!view) problems.push(`server ${server}, stream ${stream}: the server holds no replica of the stream`);
      else {
        if (gapless && view.messages !== span(view)) problems.push(`server ${server}, stream ${stream}: a gap (${text(view)})`);
        seen.push({ server, view });
      }
    }
    const [head, ...rest] = seen;
    for (const other of rest)
      if (!same(head.view, other.view))
        problems.push(`server ${other.server}, stream ${stream}: ${text(other.view)}, but server ${head.server} has ${text(head.view)}`);
    return { stream, servers: figures, problems };
  });
}
