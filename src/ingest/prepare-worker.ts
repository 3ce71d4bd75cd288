// prepare-worker: runs prepareBatch for large bulk bodies on another core, so the main thread only
// draws ids and queues puts. Each reply transfers its buffers: nothing is copied back.
import { parentPort } from "node:worker_threads";
import { ApiError } from "../errors.ts";
import { prepareBatch } from "./prepare.ts";
import { shipBlock, type PrepareReply, type PrepareRequest } from "./preparer.ts";
import { prepareShipped, type ShippedBatch } from "./shipped.ts";

parentPort!.on("message", (request: PrepareRequest) => {
  const { call, plan, split } = request;
  let reply: PrepareReply;
  const transfer: ArrayBuffer[] = [];
  try {
    const batch: Omit<ShippedBatch, "total" | "rejected"> & Partial<ShippedBatch> =
      "shipped" in request ? prepareShipped(request.shipped, plan, split) : prepareBatch(request.body, plan, request.env, split);
    const blocks = batch.blocks.map((block) => {
      const shipped = shipBlock(block);
      // msgpackr packs into one reused buffer: give each column a buffer of its own to hand over
      shipped.columns = block.columns.map((c) => c && own(c, transfer)) as typeof block.columns;
      own(shipped.terms.positions, transfer);
      return shipped;
    });
    reply =
      "shipped" in request
        ? { call, count: batch.count, blocks, total: batch.total, rejected: batch.rejected, ops: batch.ops }
        : { call, count: batch.count, blocks };
  } catch (e) {
    reply =
      e instanceof ApiError
        ? { call, error: { status: e.status, code: e.code, message: e.message, details: e.details } }
        : { call, error: { message: String((e as Error)?.stack ?? e) } };
  }
  try {
    parentPort!.postMessage(reply, transfer);
  } catch (e) {
    parentPort!.postMessage({ call, error: { message: `the prepared batch could not be handed over: ${String(e)}` } } satisfies PrepareReply); // a 500, not a dead worker
  }
});

function own(bytes: Uint8Array, transfer: ArrayBuffer[]): Uint8Array {
  const copy = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes); // a copy: Buffer#slice is a view
  if (copy.byteLength > 0) transfer.push(copy.buffer as ArrayBuffer);
  return copy;
}
