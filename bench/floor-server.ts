// floor-server: the least a write costs in the design Sluice keeps. It parses each body and makes it durable in
// LMDB, opened as Sluice opens it, and answers 201 after the commit; nothing else: no key, no checks, no ids, no
// encoding, no indexes, no limits. FLOOR picks what it does:
//   single          a bare Bun.serve: one put of the parsed entry
//   single-elysia   the same behind an Elysia route (Sluice's framework)
//   bulk            a bare Bun.serve: one put of the body's bytes
//   bulk-fulltext   the same, and each body's words go to Sluice's own full-text index (one document a body,
//                   as a 1,000-entry block is), which holds writers back when it falls behind, as in Sluice
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { open } from "lmdb";
import { blockWords } from "../src/storage/format/block-encode.ts";
import { FullText } from "../src/storage/indexes/fulltext.ts";

const FLOOR = process.env.FLOOR ?? "single";
const dir = mkdtempSync(join(tmpdir(), "sluice-floor-"));
process.on("SIGTERM", () => {
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
});
const root = open({ path: join(dir, "floor.mdb"), maxDbs: 4, mapSize: 2 ** 40 }); // as src/storage/db.ts: overlappingSync
const entries = root.openDB({ name: "entries", encoding: FLOOR.startsWith("bulk") ? "binary" : "msgpack" });
const fulltext = FLOOR === "bulk-fulltext" ? new FullText(root.openDB({ name: "fulltext", encoding: "msgpack" }), () => []) : undefined;
const decoder = new TextDecoder();
let seq = 0;

type Raw = { action: string; message?: string | null };
const created = (body: unknown) => Response.json(body, { status: 201 });

async function single(entry: Raw): Promise<object> {
  const id = ++seq;
  await entries.put([Date.now(), id], entry);
  return { id, ...entry };
}

async function bulk(req: Request): Promise<Response> {
  const bytes = await req.bytes();
  const body = JSON.parse(decoder.decode(bytes)) as Raw[]; // the ceiling's req.json(), keeping the bytes to store
  await fulltext?.caughtUp();
  const ms = Date.now();
  const firstId = String(++seq);
  await entries.put([ms, firstId], bytes);
  fulltext?.add("ws", "production", {
    ms,
    firstId,
    text: blockWords(body.map((e) => ({ action: e.action, message: e.message ?? null }))),
    entries: body.length,
  });
  return created({ count: body.length });
}

let fetch: (req: Request) => Response | Promise<Response>;
if (FLOOR === "single-elysia") {
  const { Elysia } = await import("elysia");
  const app = new Elysia().post("/", async ({ body, set }) => {
    set.status = 201;
    return await single(body as Raw);
  });
  fetch = (req) => app.fetch(req);
} else if (FLOOR === "single") {
  fetch = async (req) => created(await single((await req.json()) as Raw));
} else if (FLOOR.startsWith("bulk")) {
  fetch = bulk;
} else {
  throw new Error(`FLOOR=${FLOOR}: use single, single-elysia, bulk or bulk-fulltext`);
}
const server = Bun.serve({ hostname: "127.0.0.1", port: 0, maxRequestBodySize: 1 << 30, fetch });
console.log(`listening on http://127.0.0.1:${server.port}/`);
