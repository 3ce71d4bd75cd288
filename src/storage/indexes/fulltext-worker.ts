// fulltext-worker: the FlexSearch indexes, on the second core. It takes requests in the order they were
// posted, so a search posted after a block's add always sees that block (see fulltext-client.ts).
import { parentPort, workerData } from "node:worker_threads";
import type { MessagePort } from "node:worker_threads";
import { Index } from "flexsearch";
import { chunkText, packChunk, type Chunk } from "./fulltext-chunks.ts";
import { encodeTerms, termsToIndex } from "./fulltext-encoder.ts";
import type { WorkerRequest } from "./fulltext-client.ts";

const { signal, replies, later } = workerData as { signal: Int32Array; replies: MessagePort; later: MessagePort };
const indexes = new Map<number, Index>();

const newIndex = () =>
  new Index({
    tokenize: "strict",
    // our own words, lowercased already, digit runs cut into triplets (a search yields a superset, which the
    // engine checks; whole numbers made the index much larger and adds slower)
    encode: encodeTerms,
    resolution: 1,
    fastupdate: false,
    context: false,
  });

function index(id: number): Index {
  let ix = indexes.get(id);
  if (!ix) indexes.set(id, (ix = newIndex()));
  return ix;
}

/** answer hands a result to the caller blocked in Atomics.wait on slot 0. */
function answer(call: number, result: unknown): void {
  replies.postMessage({ call, result });
  Atomics.add(signal, 0, 1);
  Atomics.notify(signal, 0);
}

parentPort!.on("message", (batch: WorkerRequest[]) => {
  for (const r of batch) run(r);
});

function run(r: WorkerRequest): void {
  try {
    switch (r.op) {
      case "add": {
        index(r.id).add(r.doc, termsToIndex(r.text) as unknown as string); // encodeTerms passes a list of terms as it is
        Atomics.add(signal, 1, r.entries); // entries done: the client's backlog
        return;
      }
      case "search":
        return answer(r.call, indexes.get(r.id)?.search(r.query, { limit: r.limit }) ?? []);
      case "export": {
        const chunks: Chunk[] = [];
        indexes.get(r.id)?.export((key: string, data: string) => void chunks.push(packChunk(key, data)));
        return later.postMessage({ call: r.call, result: chunks });
      }
      case "import": {
        const ix = index(r.id);
        for (const chunk of r.chunks) ix.import(chunk[0], chunkText(chunk));
        return;
      }
      case "drop":
        indexes.delete(r.id);
        return;
    }
  } catch (e) {
    if (r.op === "search") return answer(r.call, { error: String(e) });
    if (r.op === "export") return later.postMessage({ call: r.call, result: { error: String(e) } });
    Atomics.store(signal, 2, 1); // an index may now miss a block: every later search must fail, not answer short
    console.error(JSON.stringify({ level: "error", msg: "full-text worker failed a request", op: r.op, error: String(e) }));
  }
}
