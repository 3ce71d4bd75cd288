// preparer: hands large bulk bodies to the ingest worker (prepare-worker.ts) and small ones to prepareBatch
// inline, where a worker's round trip would cost more than it saves. Either way the same checks run and
// the same ApiError comes back.
import { Worker } from "node:worker_threads";
import { ApiError, type ErrorCode } from "../errors.ts";
import type { JsonBody } from "../http/body.ts";
import type { Plan } from "../limits/plans.ts";
import type { Environment } from "../schema.ts";
import { prepareBatch, type PreparedBatch } from "./prepare.ts";

export interface PrepareRequest {
  call: number;
  body: JsonBody;
  plan: Plan;
  env: Environment;
}
export type PrepareReply =
  | { call: number; batch: PreparedBatch }
  | { call: number; error: { status?: number; code?: ErrorCode; message: string; details?: Record<string, unknown> } };

/** Bodies smaller than this are prepared on the calling thread. */
export const WORKER_MIN_BYTES = 64 * 1024;
// run from source, the worker is the file beside this one; in the compiled executable (scripts/build.ts)
// it is bundled as another entrypoint, at ingest/prepare-worker.js beside the program
const WORKER = import.meta.url.includes("$bunfs") ? new URL("./ingest/prepare-worker.js", import.meta.url) : new URL("./prepare-worker.ts", import.meta.url);

export class Preparer {
  private worker: Worker | undefined;
  private readonly waiting = new Map<number, { resolve: (b: PreparedBatch) => void; reject: (e: unknown) => void }>();
  private calls = 0;

  /** prepare checks and encodes a bulk body (see prepareBatch), on the worker when it is large. */
  async prepare(body: JsonBody, plan: Plan, env: Environment): Promise<PreparedBatch> {
    const { bytes } = body;
    if (bytes.byteLength < WORKER_MIN_BYTES) return prepareBatch(body, plan, env);
    const worker = this.start();
    const call = ++this.calls;
    if (this.waiting.size === 0) worker.ref();
    const done = new Promise<PreparedBatch>((resolve, reject) => this.waiting.set(call, { resolve, reject }));
    // hand the body over without a copy when the view is its whole buffer (a pooled Buffer is not)
    const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
    worker.postMessage({ call, body, plan, env } satisfies PrepareRequest, whole ? [bytes.buffer as ArrayBuffer] : []);
    return done;
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
      if ("batch" in r) return w.resolve(r.batch);
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

let shared: Preparer | undefined;

/** preparer is the process's preparer; its worker starts on the first large body. */
export function preparer(): Preparer {
  return (shared ??= new Preparer());
}
