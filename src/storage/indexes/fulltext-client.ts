// fulltext-client: the main thread's handle on a store's full-text worker (fulltext-worker.ts), started on first use.
// Requests are posted in order, in batches; adds are not awaited, so word splitting and FlexSearch run on the second core, off the
// request path. A search is posted on the same queue and waited for, so it runs after every add posted
// before it: an acknowledged write is always found, with no index lag to reason about.
import { TurnQueue } from "../../turn.ts";
import type { Chunk } from "./fulltext-chunks.ts";
import type { DocumentText } from "./fulltext-encoder.ts";
import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from "node:worker_threads";

export type WorkerRequest =
  | { op: "add"; id: number; doc: number; text: DocumentText; entries: number }
  | { op: "search"; id: number; query: string; limit: number; call: number }
  | { op: "export"; id: number; call: number }
  | { op: "import"; id: number; chunks: Chunk[] }
  | { op: "drop"; id: number };

/** Entries posted but not yet indexed beyond which writers wait: bounds memory and how long a search can wait. */
export const MAX_BACKLOG = 16_000;
const WAIT_MS = 60_000;
/** Small adds wait up to this long, so one message carries many turns' single-entry writes (each message costs the main thread) */
const ADD_DELAY_MS = 10;
/** ...unless this many entries wait: a bulk write's blocks go at the end of their turn */
const ADD_BATCH_ENTRIES = 1_000;
// run from source, the worker is the file beside this one; in the compiled executable (scripts/build.ts)
// it is bundled as a second entrypoint, at storage/indexes/fulltext-worker.js beside the program
const WORKER = import.meta.url.includes("$bunfs")
  ? new URL("./storage/indexes/fulltext-worker.js", import.meta.url)
  : new URL("./fulltext-worker.ts", import.meta.url);

type Reply = { call: number; result: unknown };

/** FullTextWorker is one store's handle on its worker thread, which starts with the first request posted. */
export class FullTextWorker {
  private worker: Worker | undefined;
  /** [0] answers given, [1] entries indexed, [2] 1 once an add failed */
  private readonly signal = new Int32Array(new SharedArrayBuffer(12));
  private syncReplies!: MessagePort;
  private asyncReplies!: MessagePort;
  private readonly waiting = new Map<number, (r: Reply) => void>();
  /** requests not yet posted, as one message; a search or any other request posts them with it */
  private outbox: WorkerRequest[] = [];
  private outboxEntries = 0;
  private flushSoon: Timer | undefined;
  /** flushes the outbox once the turn ends, however many requests asked for it */
  private readonly atTurnEnd = new TurnQueue<void>(() => this.flush());
  private posted = 0;
  private calls = 0;
  private ids = 0;

  private start(): Worker {
    const sync = new MessageChannel();
    const later = new MessageChannel();
    const worker = new Worker(WORKER, {
      workerData: { signal: this.signal, replies: sync.port2, later: later.port2 },
      transferList: [sync.port2, later.port2],
    });
    worker.unref(); // an idle index never keeps the process alive
    worker.on("error", (e) => {
      Atomics.store(this.signal, 2, 1);
      console.error(JSON.stringify({ level: "error", msg: "full-text worker stopped", error: String(e) }));
    });
    this.syncReplies = sync.port1;
    this.asyncReplies = later.port1;
    this.asyncReplies.on("message", (r: Reply) => {
      this.waiting.get(r.call)?.(r);
      this.waiting.delete(r.call);
      if (this.waiting.size === 0) this.asyncReplies.unref();
    });
    this.asyncReplies.unref();
    return worker;
  }

  /** close ends the worker thread, and with it every index it holds (the store is closed). */
  async close(): Promise<void> {
    clearTimeout(this.flushSoon);
    await this.worker?.terminate();
    this.worker = undefined;
  }

  /** newIndex names a fresh, empty index in the worker. */
  newIndex(): number {
    return ++this.ids;
  }

  add(id: number, doc: number, text: DocumentText, entries: number): void {
    this.outbox.push({ op: "add", id, doc, text, entries });
    this.posted = (this.posted + entries) | 0; // int32, as the worker's count is
    this.outboxEntries += entries;
    if (this.outboxEntries >= ADD_BATCH_ENTRIES) this.flushAtTurnEnd();
    else this.flushSoon ??= setTimeout(() => this.flush(), ADD_DELAY_MS);
  }

  import(id: number, chunks: Chunk[]): void {
    this.post({ op: "import", id, chunks });
  }

  drop(id: number): void {
    this.post({ op: "drop", id });
  }

  /** backlog is how many posted entries the worker has still to index. */
  backlog(): number {
    return (this.posted - Atomics.load(this.signal, 1)) | 0;
  }

  /** search blocks until the worker, having done every earlier request, answers with the matching documents. */
  search(id: number, query: string, limit: number): number[] {
    if (Atomics.load(this.signal, 2) === 1) throw new Error("the full-text index lost a block (see the error logged before); restart the server to rebuild it");
    const call = ++this.calls;
    let seen = Atomics.load(this.signal, 0);
    this.post({ op: "search", id, query, limit, call });
    this.flush();
    for (;;) {
      const got = receiveMessageOnPort(this.syncReplies) as { message: Reply } | undefined;
      if (got) return this.result(got.message) as number[];
      if (Atomics.wait(this.signal, 0, seen, WAIT_MS) === "timed-out") throw new Error(`the full-text worker did not answer within ${WAIT_MS} ms`);
      seen = Atomics.load(this.signal, 0);
    }
  }

  /** export resolves with an index's FlexSearch export, made on the worker while the main thread goes on. */
  export(id: number): Promise<Chunk[]> {
    const call = ++this.calls;
    this.worker ??= this.start(); // its reply port must exist before the request goes out
    this.asyncReplies.ref();
    return new Promise((resolve, reject) => {
      this.waiting.set(call, (r) => {
        try {
          resolve(this.result(r) as Chunk[]);
        } catch (e) {
          reject(e);
        }
      });
      this.post({ op: "export", id, call });
    });
  }

  private result(r: Reply): unknown {
    const { result } = r;
    if (result && typeof result === "object" && "error" in result) throw new Error(`full-text worker: ${(result as { error: string }).error}`);
    return result;
  }

  private post(r: WorkerRequest): void {
    this.outbox.push(r);
    this.flushAtTurnEnd();
  }

  private flushAtTurnEnd(): void {
    this.atTurnEnd.push();
  }

  private flush(): void {
    clearTimeout(this.flushSoon);
    this.flushSoon = undefined;
    if (this.outbox.length === 0) return;
    this.worker ??= this.start();
    this.worker.postMessage(this.outbox);
    this.outbox = [];
    this.outboxEntries = 0;
  }
}
