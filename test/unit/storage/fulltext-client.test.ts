// The full-text worker's client: searches see every add posted before them, and writers can wait for a small backlog.
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabases } from "../../../src/storage/db.ts";
import { FullTextWorker, MAX_BACKLOG } from "../../../src/storage/indexes/fulltext-client.ts";
import { FullText } from "../../../src/storage/indexes/fulltext.ts";

test("a search posted after adds answers only once the worker has indexed every one of them", () => {
  const w = new FullTextWorker();
  const id = w.newIndex();
  const filler = Array.from({ length: 5_000 }, (_, i) => `w${i}`).join(" ");
  const marker = (n: number) => `only${String.fromCharCode(97 + (n % 26), 97 + Math.floor(n / 26))}`; // letters: FlexSearch splits digits
  for (let doc = 0; doc < 200; doc++) w.add(id, doc, `${filler} ${marker(doc)}`, 1);
  expect(w.search(id, marker(199), 10)).toEqual([199]);
  expect(w.search(id, "w17", 1_000).length).toBe(200);
  expect(w.backlog()).toBe(0);
});

test("caughtUp resolves only once the worker's backlog is at most MAX_BACKLOG entries", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-ft-"));
  const dbs = openDatabases(dir);
  const fulltext = new FullText(dbs.fulltext, () => [], 1e12);
  const filler = Array.from({ length: 20_000 }, (_, i) => `x${i}`).join(" ");
  for (let b = 0; b < 64; b++) fulltext.add("ws", "development", { ms: b, firstId: `id${b}`, text: `${filler} b${b}`, entries: MAX_BACKLOG / 16 });
  const worker = (fulltext as unknown as { worker: FullTextWorker }).worker;
  expect(worker.backlog()).toBeGreaterThan(MAX_BACKLOG); // the adds outran the worker
  await fulltext.caughtUp();
  expect(worker.backlog()).toBeLessThanOrEqual(MAX_BACKLOG);
  await dbs.root.close();
  rmSync(dir, { recursive: true, force: true });
});

test("small adds are posted together within ADD_DELAY_MS with no search after them; 1,000 entries' worth go at the end of the turn", async () => {
  const w = new FullTextWorker();
  const id = w.newIndex();
  for (let doc = 0; doc < 5; doc++) w.add(id, doc, `small add ${doc}`, 1);
  expect(w.backlog()).toBe(5);
  const deadline = Date.now() + 2_000;
  while (w.backlog() > 0 && Date.now() < deadline) await Bun.sleep(5);
  expect(w.backlog()).toBe(0);
  w.add(id, 5, "a bulk block", 1_000);
  await new Promise((r) => setImmediate(r));
  const posted = Date.now();
  while (w.backlog() > 0 && Date.now() < posted + 2_000) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1); // no timer runs meanwhile
  expect(w.backlog()).toBe(0);
});
