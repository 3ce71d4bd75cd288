// relay: a streamed answer (a live tail's Server-Sent Events) carried over NATS from the node holding a copy of the
// partition to the node the client is connected to. The asker sends the request with a subject of its own; the copy
// sends the head, then each chunk in order, then the end. The asker acknowledges the bytes its client has taken, and
// the copy sends at most WINDOW_BYTES ahead of them: a slow client holds the copy's stream back, whose own bounds
// then apply (a tail's overflow). The asker says it is still listening every few seconds and cancels when its client
// leaves; a copy that stops hearing from it ends the stream.
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { pack, unpack } from "./message.ts";

const ALIVE_EVERY_MS = 3000;
const ALIVE_TIMEOUT_MS = 10_000;
/** how long an asker waits for a copy to take its request before sending it again */
const RESEND_MS = 1000;
const CHUNK_BYTES = 512 * 1024;
/** bytes a copy sends beyond what the asker's client has taken */
const WINDOW_BYTES = 64 * 1024;

/**
 * RelayedRequest is a request sent to another node: its method, URL, headers, body and the barrier it must wait for
 * (Infinity: the stream's last sequence, which the copy asks for itself once the request arrives).
 */
export interface RelayedRequest {
  method: string;
  url: string;
  headers: [string, string][];
  body: Uint8Array | null;
  barrier: number;
  /**
   * run at once on a copy that looks current, and say the sequence it had applied (the asking node compares it with
   * the barrier it asked for meanwhile); a copy that does not look current takes the barrier as usual
   */
  early?: boolean;
  /** the hash of the key the asking node admitted the request as (the answering copy does not admit it again) */
  keyHash?: string;
  /** the subject the answer streams to */
  inbox?: string;
  /** the asker sends the request again until a copy says it took it (`taken`); an asker from before never reads one */
  untilTaken?: boolean;
}

/** taken: a copy has the request and is making its answer (the asker stops sending it again) */
type Frame = { taken: true } | { head: { status: number; headers: [string, string][] } } | { chunk: Uint8Array } | { end: true };

/**
 * askStream sends a request to `subject` and returns the answer as it streams back; undefined if no copy answers within
 * `timeoutMs`. A request no copy took within RESEND_MS is sent again (a publish before a peer's interest reached this
 * node's server is lost), each time to an inbox of its own: the first copy to take one answers, any later is cancelled.
 */
export async function askStream(nc: NatsConnection, subject: string, request: RelayedRequest, timeoutMs: number): Promise<Response | undefined> {
  const base = `_INBOX.sluice.${crypto.randomUUID()}`;
  const sub = nc.subscribe(`${base}.*`);
  let sent = 0;
  const send = () => nc.publish(subject, pack({ ...request, inbox: `${base}.${++sent}`, untilTaken: true } satisfies RelayedRequest));
  send();
  const resend = setInterval(send, RESEND_MS);
  let chosen: string | undefined;
  const cancelled = new Set<string>();
  /** the frames of the chosen inbox but its `taken`; a copy that took another is told to stop */
  const frames = (async function* () {
    for await (const m of sub) {
      const frame = unpack<Frame>(m.data);
      chosen ??= m.subject;
      if ("taken" in frame) clearInterval(resend);
      else if (m.subject === chosen) yield frame;
      else if (!cancelled.has(m.subject)) {
        // told once its answer streams (its control subject is listened to from the head on)
        cancelled.add(m.subject);
        nc.publish(`${m.subject}.cancel`, new Uint8Array(0));
      }
    }
  })();
  const next = async (): Promise<Frame | undefined> => {
    const n = await frames.next();
    return n.done ? undefined : n.value;
  };
  const head = await Promise.race([next(), Bun.sleep(timeoutMs).then(() => undefined)]);
  clearInterval(resend);
  if (!head || !("head" in head)) {
    sub.unsubscribe();
    if (chosen) nc.publish(`${chosen}.cancel`, new Uint8Array(0));
    return undefined;
  }
  const inbox = chosen as string;
  const alive = setInterval(() => nc.publish(`${inbox}.alive`, new Uint8Array(0)), ALIVE_EVERY_MS);
  const finish = () => {
    clearInterval(alive);
    sub.unsubscribe();
  };
  let taken = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const frame = await next();
      if (!frame || "end" in frame) {
        finish();
        controller.close();
      } else if ("chunk" in frame) {
        controller.enqueue(frame.chunk);
        taken += frame.chunk.byteLength;
        nc.publish(`${inbox}.ack`, pack(taken));
      }
    },
    cancel() {
      nc.publish(`${inbox}.cancel`, new Uint8Array(0));
      finish();
    },
  });
  return new Response(body, head.head);
}

/** serveStream answers streamed requests on `subject` (in a queue group unless told: one copy answers each) with `answer`'s Response. */
export function serveStream(nc: NatsConnection, subject: string, answer: (request: RelayedRequest) => Promise<Response>, queue = true): Subscription {
  const sub = nc.subscribe(subject, queue ? { queue: "copies" } : {});
  void (async () => {
    for await (const m of sub) {
      const request = unpack<RelayedRequest>(m.data);
      const inbox = request.inbox;
      if (!inbox) continue;
      if (request.untilTaken) nc.publish(inbox, pack({ taken: true } satisfies Frame));
      // answers are made side by side: one slow to make (a backup) holds no other request back untaken
      void answer(request)
        .catch((e) => Response.json({ error: String(e) }, { status: 500 }))
        .then((response) => relay(nc, inbox, response))
        .catch(() => {}); // the connection closed meanwhile (the node stops): nobody is left to answer
    }
  })();
  return sub;
}

async function relay(nc: NatsConnection, inbox: string, response: Response): Promise<void> {
  nc.publish(inbox, pack({ head: { status: response.status, headers: [...response.headers] } } satisfies Frame));
  const reader = response.body?.getReader();
  if (!reader) {
    nc.publish(inbox, pack({ end: true } satisfies Frame));
    return;
  }
  let heard = Date.now();
  let sent = 0;
  let acked = 0;
  let wake = () => {};
  const control = nc.subscribe(`${inbox}.*`);
  void (async () => {
    for await (const m of control) {
      if (m.subject.endsWith(".cancel")) void reader.cancel();
      else if (m.subject.endsWith(".ack")) acked = Math.max(acked, unpack<number>(m.data));
      heard = Date.now();
      wake();
    }
  })();
  const watch = setInterval(() => {
    if (Date.now() - heard <= ALIVE_TIMEOUT_MS) return;
    void reader.cancel();
    wake();
  }, ALIVE_EVERY_MS);
  try {
    for (;;) {
      while (sent - acked >= WINDOW_BYTES && Date.now() - heard <= ALIVE_TIMEOUT_MS) await new Promise<void>((resolve) => (wake = resolve));
      const { done, value } = await reader.read();
      if (done) break;
      // pieces under NATS's default max_payload (1 MB)
      for (let at = 0; at < value.byteLength; at += CHUNK_BYTES) nc.publish(inbox, pack({ chunk: value.subarray(at, at + CHUNK_BYTES) } satisfies Frame));
      sent += value.byteLength;
    }
  } catch {
    // cancelled: the asker left
  } finally {
    clearInterval(watch);
    if (!nc.isClosed()) {
      control.unsubscribe();
      nc.publish(inbox, pack({ end: true } satisfies Frame));
    }
  }
}
