// A write crosses the partition stream unchanged (contract §13): entries and encoded blocks come back as sent.
import { expect, test } from "bun:test";
import { Packr } from "msgpackr";
import { decodeWrite, encodeWrite } from "../../../src/cluster/message.ts";
import { encodeEntries } from "../../../src/storage/format/encode.ts";
import type { Entry } from "../../../src/storage/format/block.ts";

const entry = (over: Partial<Entry> = {}): Entry => ({
  id: "01a20fa0-7756-7239-949a-c9837f9fa699",
  level: "info",
  action: "a",
  message: "é\u0000",
  tags: ["t"],
  clientMs: 1,
  actor: null,
  target: null,
  context: null,
  metadata: JSON.parse('{"__proto__":{"polluted":true},"n":-1500,"nested":{"arr":[1,{"k":null}]}}'),
  ...over,
});

test("entries come back exactly as sent, a __proto__ key included", () => {
  const m = { ws: "w", env: "production" as const, ms: 5, limit: -1, entries: [entry()] };
  const back = decodeWrite(encodeWrite(m));
  expect(JSON.stringify(back)).toBe(JSON.stringify(m));
  expect(Object.keys(back.entries![0].metadata as object)).toContain("__proto__");
});

test("a shipper request's rejected entries come back as sent, small and compressed", () => {
  for (const count of [1, 40]) {
    const items = Array.from({ length: count }, (_, index) => ({ index, field: "message", reason: "too large", sample: `{"message":"${"z".repeat(200)}"}` }));
    const m = { ws: "w", env: "production" as const, ms: 5, limit: -1, rejected: { protocol: "es" as const, items } };
    expect(decodeWrite(encodeWrite(m))).toEqual(m);
  }
});

test("encoded blocks come back with their typed arrays", () => {
  const { id: _, ...rest } = entry();
  const block = encodeEntries([rest]);
  const back = decodeWrite(encodeWrite({ ws: "w", env: "production", ms: 5, limit: 10, prepared: { ids: ["i"], blocks: [block] } }));
  expect(back.prepared!.blocks[0]).toEqual(block);
  expect(back.prepared!.blocks[0].filters[0]).toBeInstanceOf(Uint32Array);
});

test("a bulk write crosses compressed, its ids and blocks exactly as sent", () => {
  const rows = Array.from({ length: 300 }, (_row, i) => {
    const { id: _, ...rest } = entry({ message: `request ${i} took ${i * 7} ms`, tags: [`t${i % 5}`] });
    return rest;
  });
  const ids = rows.map((_, i) => `01a20fa0-7756-7239-949a-${String(i).padStart(12, "0")}`);
  const m = { ws: "w", env: "production" as const, ms: 5, limit: -1, prepared: { ids, blocks: [encodeEntries(rows)] } };
  const bytes = encodeWrite(m);
  expect(bytes[0]).toBe(0xc1);
  const back = decodeWrite(bytes);
  expect(back.prepared!.ids).toEqual(ids);
  expect(back.prepared!.blocks).toEqual(m.prepared.blocks);
});

test("a write packed before the framing byte (a stream written by an older front) still reads", () => {
  const old = new Packr({ moreTypes: true, useRecords: false }).pack({ ws: "w", env: "production", ms: 5, limit: -1, entriesJson: JSON.stringify([entry()]) });
  expect(decodeWrite(old).entries).toEqual([entry()]);
});

test("a write carries its blocks' filters where a node of the version before finds none, and one sent as before still reads", () => {
  const { id: _, ...rest } = entry();
  const block = encodeEntries([rest]);
  const bytes = encodeWrite({ ws: "w", env: "production", ms: 5, limit: 10, prepared: { ids: ["i"], blocks: [block] } });
  const packr = new Packr({ moreTypes: true, useRecords: false });
  const asSent = packr.unpack(bytes.subarray(1)) as { blocks: Record<string, unknown>[] }; // small: sent plain
  expect(bytes[0]).toBe(0xc2);
  expect(asSent.blocks[0].filters).toBeUndefined(); // an older node stops at this write rather than probe its filters wrongly
  // a write of the version before: its blocks' `filters`
  const before = packr.pack({ ws: "w", env: "production", ms: 5, limit: 10, ids: ["i"], blocks: [block] });
  expect(decodeWrite(Uint8Array.from([0xc2, ...before])).prepared!.blocks[0]).toEqual(block);
  // and a block with neither is refused, not stored unfindable
  const bare = packr.pack({ ws: "w", env: "production", ms: 5, limit: 10, ids: ["i"], blocks: [{ ...block, filters: undefined }] });
  expect(() => decodeWrite(Uint8Array.from([0xc2, ...bare]))).toThrow("upgrade every node");
});
