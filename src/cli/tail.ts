// tail: `sluice tail`: prints the entries of a live tail as NDJSON as they arrive, and reconnects after a drop, an
// overflow or a restart from the last cursor the server gave, so no entry is lost or printed twice.

export interface TailCommand {
  url: string;
  key: string;
  query?: string;
  backfill?: number;
}

/** SseBlock is one parsed block of an event stream. */
interface SseBlock {
  id?: string;
  event: string;
  data: string[];
}

const RETRY_MS = [250, 500, 1000, 2000, 5000];

/**
 * tailCommand follows a tail until `signal` aborts or the server refuses it (a bad key or query: then it throws);
 * `print` gets each entry's JSON text, `note` what happens to the connection.
 */
export async function tailCommand(c: TailCommand, print: (json: string) => void, note: (text: string) => void, signal?: AbortSignal): Promise<void> {
  let cursor: string | undefined;
  let failures = 0;
  while (!signal?.aborted) {
    const params = new URLSearchParams();
    if (c.query) params.set("query", c.query);
    if (cursor === undefined && c.backfill) params.set("backfill", String(c.backfill));
    let r: Response;
    try {
      r = await fetch(`${c.url.replace(/\/$/, "")}/api/v1/workspace/logs/tail?${params}`, {
        headers: { "x-api-key": c.key, accept: "text/event-stream", ...(cursor ? { "last-event-id": cursor } : {}) },
        signal,
      });
    } catch (e) {
      if (signal?.aborted) return;
      await pause(failures++, note, `cannot reach ${c.url} (${(e as Error).message})`);
      continue;
    }
    if (r.status === 429 || r.status >= 500) {
      await r.body?.cancel();
      await pause(failures++, note, `the server answered ${r.status}`);
      continue;
    }
    if (r.status !== 200) {
      const body = (await r.json().catch(() => null)) as { error_code?: string; message?: string } | null;
      throw new Error(`the server refused the tail (${r.status} ${body?.error_code ?? ""}): ${body?.message ?? ""}`);
    }
    failures = 0;
    try {
      for await (const block of blocks(r.body!)) {
        if (block.id !== undefined) cursor = block.id;
        if (block.event === "entry" && block.data.length > 0) print(block.data.join("\n"));
        else if (block.event === "overflow") note("the tail fell behind (overflow); resuming from the last entry printed");
      }
    } catch (e) {
      if (signal?.aborted) return;
      note(`the connection dropped (${(e as Error).message})`);
    }
    if (!signal?.aborted) await pause(0, note, "the stream ended");
  }
}

async function pause(failures: number, note: (text: string) => void, why: string): Promise<void> {
  const ms = RETRY_MS[Math.min(failures, RETRY_MS.length - 1)];
  note(`${why}; reconnecting in ${ms} ms`);
  await Bun.sleep(ms);
}

/** blocks parses an event stream into its blocks (comments dropped), as EventSource reads it. */
async function* blocks(body: ReadableStream<Uint8Array>): AsyncGenerator<SseBlock> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, "\n");
    for (let at = buffer.indexOf("\n\n"); at >= 0; at = buffer.indexOf("\n\n")) {
      const text = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      const block: SseBlock = { event: "message", data: [] };
      for (const line of text.split("\n")) {
        if (line === "" || line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const name = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (name === "id") block.id = value;
        else if (name === "event") block.event = value;
        else if (name === "data") block.data.push(value);
      }
      yield block;
    }
  }
}
