// merge-worker: encodes merged parts (part.ts) on another core, so a merge costs the main thread only its reads and its commit.
import { parentPort } from "node:worker_threads";
import type { ClientBounds } from "../indexes/bounds.ts";
import { encodePart, type Member } from "../format/part.ts";

/** MergeRequest asks for the part of some blocks; the reply is the part's value, or why it could not be made. */
export type MergeRequest = { call: number; members: Member[] };
export type MergeReply = { call: number; part: Uint8Array; bounds: ClientBounds } | { call: number; error: string };

parentPort!.on("message", ({ call, members }: MergeRequest) => {
  let reply: MergeReply;
  try {
    // msgpackr packs into one reused buffer: the part gets a buffer of its own to hand over
    const { value, bounds } = encodePart(members);
    const part = value.slice();
    reply = { call, part, bounds };
    parentPort!.postMessage(reply, [part.buffer as ArrayBuffer]);
  } catch (e) {
    reply = { call, error: String(e) };
    parentPort!.postMessage(reply);
  }
});
