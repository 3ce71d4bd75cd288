// The read order across blocks of one millisecond: blocks apart in id are read one after another (newest first for
// pages, oldest first for tails and context), only as far as the read goes; blocks that interleave in id are merged
// into id order.
import { expect, test } from "bun:test";
import { IdGenerator } from "../../../src/ids.ts";
import { ascendingRows, TOP } from "../../../src/query/ascending.ts";
import { rows, type BlockReader } from "../../../src/query/execute.ts";
import type { Entry } from "../../../src/storage/entries.ts";
import { tempEntryStore } from "../../helpers/entry-store.ts";

const store = tempEntryStore("execute");

const MS = Date.parse("2026-11-29T12:00:00.000Z");
const RANGE = { fromMs: 0, toMs: MS + 1 };
const entry = (id: string): Entry => ({
  id,
  level: "info",
  action: "execute.test",
  message: `m ${id}`,
  tags: [],
  clientMs: MS,
  actor: null,
  target: null,
  context: null,
  metadata: null,
});

/** counting wraps the real store, counting the blocks copied out whole (readBlock) */
const counting = () => {
  const c = {
    whole: 0,
    reader: {
      readBlock: (...a: Parameters<BlockReader["readBlock"]>) => {
        c.whole++;
        return store.readBlock(...a);
      },
      readBlockTransient: (...a: Parameters<BlockReader["readBlockTransient"]>) => store.readBlockTransient(...a),
    } satisfies BlockReader,
  };
  return c;
};

test("blocks of one millisecond apart in id are read newest first, only as far as the read goes", async () => {
  const tenant = { ws: "ws-apart", env: "production" as const };
  const ids = new IdGenerator().next(400, MS).ids;
  // four writes of one millisecond, each committed in a turn of its own: four blocks whose ids follow each other
  for (let w = 0; w < 4; w++) await store.append(tenant, MS, ids.slice(w * 100, (w + 1) * 100).map(entry), -1);
  expect([...store.blocks(tenant, RANGE)].length).toBe(4);

  const c = counting();
  const read = rows({ store: c.reader, tenant, range: RANGE }, store.blocks(tenant, RANGE));
  const first: string[] = [];
  for (const row of read) {
    first.push(row.entry.id);
    if (first.length === 10) break;
  }
  expect(first).toEqual(ids.slice(-10).reverse());
  expect(c.whole).toBe(1);

  const all = [...rows({ store, tenant, range: RANGE }, store.blocks(tenant, RANGE))].map((r) => r.entry.id);
  expect(all).toEqual(ids.slice().reverse());
});

test("blocks of one millisecond that interleave in id are merged into id order", async () => {
  const tenant = { ws: "ws-interleaved", env: "production" as const };
  const ids = new IdGenerator().next(6, MS).ids;
  // two blocks of one millisecond, as two writers would leave them: ids 0, 2, 4 and 1, 3, 5
  await store.append(tenant, MS, [ids[0], ids[2], ids[4]].map(entry), -1);
  await store.append(tenant, MS, [ids[1], ids[3], ids[5]].map(entry), -1);
  expect([...store.blocks(tenant, RANGE)].length).toBe(2);

  const all = [...rows({ store, tenant, range: RANGE }, store.blocks(tenant, RANGE))].map((r) => r.entry.id);
  expect(all).toEqual(ids.slice().reverse());
  const after = { ...RANGE, after: { ms: MS, id: ids[3] } };
  expect([...rows({ store, tenant, range: after }, store.blocks(tenant, after))].map((r) => r.entry.id)).toEqual([ids[2], ids[1], ids[0]]);
});

test("oldest first, blocks of one millisecond apart in id are read as far as the read goes, and interleaving ones merged", async () => {
  const apart = { ws: "ws-ascending-apart", env: "production" as const };
  const ids = new IdGenerator().next(400, MS).ids;
  for (let w = 0; w < 4; w++) await store.append(apart, MS, ids.slice(w * 100, (w + 1) * 100).map(entry), -1);
  const c = counting();
  const reader = { blocksAscending: store.blocksAscending.bind(store), readBlock: c.reader.readBlock };
  const first: string[] = [];
  for (const row of ascendingRows(reader, apart, { ms: 0, id: "" }, TOP, () => true)) {
    first.push((row as { entry: Entry }).entry.id);
    if (first.length === 10) break;
  }
  expect(first).toEqual(ids.slice(0, 10));
  expect(c.whole).toBe(1);
  const all = [...ascendingRows(store, apart, { ms: 0, id: "" }, TOP, () => true)].map((r) => (r as { entry: Entry }).entry.id);
  expect(all).toEqual(ids);

  const interleaved = { ws: "ws-ascending-interleaved", env: "production" as const };
  const six = new IdGenerator().next(6, MS).ids;
  await store.append(interleaved, MS, [six[0], six[2], six[4]].map(entry), -1);
  await store.append(interleaved, MS, [six[1], six[3], six[5]].map(entry), -1);
  const merged = [...ascendingRows(store, interleaved, { ms: MS, id: six[1] }, TOP, () => true)].map((r) => (r as { entry: Entry }).entry.id);
  expect(merged).toEqual(six.slice(2));
});
