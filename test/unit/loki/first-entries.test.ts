// A log query reads blocks newest first and stops past the oldest block that still reaches its last kept entry's
// client time (tally.ts, bounds.ts oldestReaching): on a real store, the references it takes and the blocks it reads.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IdGenerator } from "../../../src/ids.ts";
import { firstEntries } from "../../../src/loki/logs.ts";
import { parseLogQL } from "../../../src/loki/parse.ts";
import { TimeSlicer } from "../../../src/query/slice.ts";
import { openDatabases } from "../../../src/storage/db.ts";
import { type Entry, EntryStore } from "../../../src/storage/entries.ts";
import type { LogExpr } from "../../../src/loki/ast.ts";
import { UsageStore } from "../../../src/storage/usage.ts";

const dir = mkdtempSync(join(tmpdir(), "sluice-first-entries-"));
const dbs = openDatabases(dir, () => {});
const store = new EntryStore(dbs, new UsageStore(dbs.usage));
afterAll(async () => {
  await store.settled();
  await dbs.root.close();
  rmSync(dir, { recursive: true, force: true });
});
const scope = { ws: "ws-first", env: "production" as const, floorMs: 0 };
const T0 = Date.parse("2026-11-21T08:00:00.000Z");
const BLOCKS = 200;

/** visits counts the block references the range scan hands a read and the blocks it reads */
async function visits<T>(f: () => Promise<T>): Promise<[T, { refs: number; reads: number }]> {
  const blocks = store.blocks.bind(store);
  const read = store.readBlockTransient.bind(store);
  const seen = { refs: 0, reads: 0 };
  store.blocks = function* (...args) {
    for (const ref of blocks(...args)) {
      seen.refs++;
      yield ref;
    }
  };
  store.readBlockTransient = (...args) => {
    seen.reads++;
    return read(...args);
  };
  try {
    return [await f(), seen];
  } finally {
    store.blocks = blocks;
    store.readBlockTransient = read;
  }
}

test("a backward log query takes the newest blocks' references only, and a forward one (which cannot stop) all of them, both exact", async () => {
  const ids = new IdGenerator();
  const all: { id: string; ms: number }[] = [];
  for (let b = 0; b < BLOCKS; b++) {
    // client times follow the blocks, but block 7 (written early) holds the newest one of all
    const { ms, ids: fresh } = ids.next(10, T0 + b * 1000);
    const entries = fresh.map((id, i): Entry => {
      const clientMs = b === 7 && i === 0 ? T0 + BLOCKS * 1000 : T0 + b * 1000 + i;
      all.push({ id, ms: clientMs });
      return { id, level: "info", action: "a.b", message: `m${b}`, tags: [], actor: null, target: null, context: null, metadata: null, clientMs };
    });
    await store.append(scope, ms, entries, -1);
  }
  const log = parseLogQL('{environment="production"}') as LogExpr;
  const window = { fromMs: T0, toMs: T0 + (BLOCKS + 1) * 1000 };
  const order = (a: { id: string; ms: number }, b: { id: string; ms: number }) => a.ms - b.ms || (a.id < b.id ? -1 : 1);
  for (const limit of [1, 5, 25]) {
    const [kept, seen] = await visits(() => firstEntries(store, scope, log, window, limit, "backward", new TimeSlicer(30_000)));
    expect(kept.map((s) => s.entry.id)).toEqual(
      [...all]
        .sort((a, b) => order(b, a))
        .slice(0, limit)
        .map((e) => e.id),
    );
    // block 7 reaches past every other: the read goes on to it, and stops at the next reference (block 6's)
    expect(seen.refs).toBe(BLOCKS - 6);
    expect(seen.reads).toBeLessThan(10);
  }
  const [kept, seen] = await visits(() => firstEntries(store, scope, log, window, 5, "forward", new TimeSlicer(30_000)));
  expect(kept.map((s) => s.entry.id)).toEqual(
    [...all]
      .sort(order)
      .slice(0, 5)
      .map((e) => e.id),
  );
  expect(seen.refs).toBe(BLOCKS);
});

test("a backward log query whose newest block holds `limit` entries reads that block alone: the next block's bounds are tested once it is counted", async () => {
  const own = { ...scope, ws: "ws-first-alone" };
  const ids = new IdGenerator();
  for (let b = 0; b < 20; b++) {
    const { ms, ids: fresh } = ids.next(10, T0 + b * 1000);
    const entries = fresh.map(
      (id, i): Entry => ({
        id,
        level: "info",
        action: "a.b",
        message: `m${b}`,
        tags: [],
        actor: null,
        target: null,
        context: null,
        metadata: null,
        clientMs: T0 + b * 1000 + i,
      }),
    );
    await store.append(own, ms, entries, -1);
  }
  const log = parseLogQL('{environment="production"}') as LogExpr;
  const [kept, seen] = await visits(() => firstEntries(store, own, log, { fromMs: T0, toMs: T0 + 21_000 }, 10, "backward", new TimeSlicer(30_000)));
  expect(kept.map((s) => s.entry.clientMs)).toEqual(Array.from({ length: 10 }, (_, i) => T0 + 19_000 + 9 - i));
  expect(seen.reads).toBe(1);
});
