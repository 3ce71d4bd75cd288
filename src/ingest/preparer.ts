// preparer: hands large bulk bodies to the ingest worker (prepare-worker.ts) and small ones to prepareBatch
// inline, where a worker's round trip would cost more than it saves. Either way the same checks run and
// the same ApiError comes back.
import { Worker } from "node:worker_threads";
import { ApiError, type ErrorCode } from "../errors.ts";
import type { JsonBody } from "./scan.ts";
import type { Plan } from "../limits/plans.ts";
import type { Environment } from "../schema.ts";
import type { BlockTerms, PostingKind } from "../storage/indexes/posting-terms.ts";
import type { EncodedBlock } from "../storage/format/encode.ts";
import { prepareBatch, type PreparedBatch } from "./prepare.ts";
import { prepareShipped, type ShippedBatch, type ShippedBody } from "./shipped.ts";

/** PrepareRequest asks the worker for a bulk body's blocks, or (with `shipped`) a protocol request's. */
export type PrepareRequest = { call: number; split: boolean } & ({ body: JsonBody; plan: Plan; env: Environment } | { shipped: ShippedBody; plan: Plan });
export type PrepareReply =
  | ({ call: number; count: number; blocks: ShippedBlock[] } & Partial<Pick<ShippedBatch, "total" | "rejected" | "ops">>)
  | { call: number; error: { status?: number; code?: ErrorCode; message: string; details?: Record<string, unknown> } };

/** Bodies smaller than this are prepared on the calling thread. */
export const WORKER_MIN_BYTES = 64 * 1024;
/** Shipper bodies are denser (protobuf, snappy): smaller ones already hold enough entries to be worth the trip. */
export const SHIPPED_WORKER_MIN_BYTES = 16 * 1024;
// run from source, the worker is the file beside this one; in the compiled executable (scripts/build.ts)
// it is bundled as another entrypoint, at ingest/prepare-worker.js beside the program
const WORKER = import.meta.url.includes("$bunfs") ? new URL("./ingest/prepare-worker.js", import.meta.url) : new URL("./prepare-worker.ts", import.meta.url);

export class Preparer {
  private worker: Worker | undefined;
  private readonly waiting = new Map<number, { resolve: (b: PreparedBatch | ShippedBatch) => void; reject: (e: unknown) => void }>();
  private calls = 0;

  /** `split`: the full-text words are split where blocks are encoded (encodeEntries), not by the full-text worker */
  constructor(private readonly split = false) {}

  /** prepare checks and encodes a bulk body (see prepareBatch), on the worker when it is large. */
  async prepare(body: JsonBody, plan: Plan, env: Environment): Promise<PreparedBatch> {
    const { bytes } = body;
    if (bytes.byteLength < WORKER_MIN_BYTES) return prepareBatch(body, plan, env, this.split);
    return this.post<PreparedBatch>((call) => ({ call, split: this.split, body, plan, env }), bytes);
  }

  /** prepareShipped decodes and checks a protocol request (see shipped.ts), on the worker when it is large. */
  async prepareShipped(shipped: ShippedBody, plan: Plan): Promise<ShippedBatch> {
    if (shipped.bytes.byteLength < SHIPPED_WORKER_MIN_BYTES) return prepareShipped(shipped, plan, this.split);
    return this.post<ShippedBatch>((call) => ({ call, split: this.split, shipped, plan }), shipped.bytes);
  }

  private post<B extends PreparedBatch | ShippedBatch>(request: (call: number) => PrepareRequest, bytes: Uint8Array): Promise<B> {
    const worker = this.start();
    const call = ++this.calls;
    if (this.waiting.size === 0) worker.ref();
    const done = new Promise<B>((resolve, reject) => this.waiting.set(call, { resolve: resolve as (b: PreparedBatch | ShippedBatch) => void, reject }));
    // hand the body over without a copy when the view is its whole buffer (a pooled Buffer is not)
    const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
    worker.postMessage(request(call), whole ? [bytes.buffer as ArrayBuffer] : []);
    return done;
  }

  /** close ends the worker thread, if it started; nothing may be waiting on it. */
  async close(): Promise<void> {
    await this.worker?.terminate();
    this.worker = undefined;
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = (this.worker = new Worker(WORKER));
    worker.unref();
    worker.on("message", (r: PrepareReply) => {
      const w = this.waiting.get(r.call);
      this.waiting.delete(r.call);
      if (this.waiting.size === 0) worker.unref();
      if (!w) return;
      if ("blocks" in r) {
        const blocks = r.blocks.map(landBlock);
        return w.resolve(
          r.total === undefined ? { count: r.count, blocks } : { total: r.total, count: r.count, blocks, rejected: r.rejected ?? [], ops: r.ops },
        );
      }
      const { status, code, message, details } = r.error;
      w.reject(status && code ? new ApiError(status, code, message, details) : new Error(`ingest worker: ${message}`));
    });
    worker.on("error", (e) => {
      // a worker that died answers nothing more: fail what it held (500) and start a fresh one next time
      console.error(JSON.stringify({ level: "error", msg: "ingest worker stopped", error: String(e) }));
      this.worker = undefined;
      for (const w of this.waiting.values()) w.reject(e);
      this.waiting.clear();
    });
    return worker;
  }
}

/**
 * ShippedBlock is a EncodedBlock as the worker hands it over: the positions of its postings in one buffer.
 * Cloned or transferred, a hundred small buffers a block cost the two threads more than all its columns.
 */
export interface ShippedBlock extends Omit<EncodedBlock, "terms"> {
  terms: { kinds: string; names: string[]; ends: Uint32Array; positions: Uint8Array };
}

/** shipBlock packs a block's postings for the trip (the worker's side). */
export function shipBlock(block: EncodedBlock): ShippedBlock {
  const n = block.terms.length;
  const ends = new Uint32Array(n);
  let size = 0;
  for (let i = 0; i < n; i++) ends[i] = size += block.terms[i][2].byteLength;
  const positions = new Uint8Array(size);
  for (let i = 0; i < n; i++) positions.set(block.terms[i][2], i === 0 ? 0 : ends[i - 1]);
  const terms = { kinds: block.terms.map((t) => t[0]).join(""), names: block.terms.map((t) => t[1]), ends, positions };
  return { ...block, terms };
}

/** landBlock gives a shipped block its postings back, their positions viewed in the one buffer (the main thread's side). */
export function landBlock(block: ShippedBlock): EncodedBlock {
  const { kinds, names, ends, positions } = block.terms;
  const terms: [PostingKind, string, Uint8Array][] = new Array(names.length);
  for (let i = 0; i < names.length; i++) terms[i] = [kinds[i] as PostingKind, names[i], positions.subarray(i === 0 ? 0 : ends[i - 1], ends[i])];
  return { ...block, terms: terms satisfies BlockTerms };
}
