// A write crosses the partition stream unchanged (contract §13): entries and encoded blocks come back as sent.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { Packr } from "msgpackr";
import { damagedCopies, readsOrRefuses } from "../../helpers/damaged.ts";
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
  expect([bytes[0], bytes[1]]).toEqual([0xc3, 1]); // its columns and filters beside the compressed rest
  const back = decodeWrite(bytes);
  expect(back.prepared!.ids).toEqual(ids);
  expect(back.prepared!.blocks).toEqual(m.prepared.blocks);
});

test("a bulk write's filters come back in buffers of their own, not views of the message the NATS client holds", () => {
  const rows = Array.from({ length: 300 }, (_row, i) => {
    const { id: _, ...rest } = entry({ message: `request ${i}`, metadata: { n: i } });
    return rest;
  });
  const ids = rows.map((_, i) => `01a20fa0-7756-7239-949a-${String(i).padStart(12, "0")}`);
  const bytes = Buffer.from(encodeWrite({ ws: "w", env: "production", ms: 5, limit: -1, prepared: { ids, blocks: [encodeEntries(rows)] } }));
  const back = decodeWrite(bytes);
  const { filters, columns } = back.prepared!.blocks[0];
  for (const f of filters) expect(f.buffer.byteLength).toBe(f.byteLength);
  // slice() copies, as the storage code expects of every byte array of a block (a Buffer's slice() is a view)
  for (const bytes of [...columns, ...back.prepared!.blocks[0].terms.map((t) => t[2])])
    if (bytes) expect(Object.getPrototypeOf(bytes)).toBe(Uint8Array.prototype);
  const before = columns.map((c) => c && Buffer.from(c));
  bytes.fill(0); // the client's buffer reused
  expect(columns.map((c) => c && Buffer.from(c))).toEqual(before);
});

test("a damaged write reads as an error or as a write, never hangs or crashes (fuzz)", () => {
  const rows = Array.from({ length: 40 }, (_row, i) => {
    const { id: _, ...rest } = entry({ message: `request ${i}` });
    return rest;
  });
  const ids = rows.map((_, i) => `01a20fa0-7756-7239-949a-${String(i).padStart(12, "0")}`);
  for (const good of [
    encodeWrite({ ws: "w", env: "production", ms: 5, limit: -1, prepared: { ids, blocks: [encodeEntries(rows)] } }),
    encodeWrite({ ws: "w", env: "production", ms: 5, limit: -1, prepared: { ids: ids.slice(0, 1), blocks: [encodeEntries(rows.slice(0, 1))] } }),
    encodeWrite({ ws: "w", env: "production", ms: 5, limit: -1, entries: [entry()] }),
  ])
    fc.assert(
      fc.property(damagedCopies(good), (bytes) => readsOrRefuses(() => decodeWrite(bytes))),
      { numRuns: 300 },
    );
});

test("a write packed before the framing byte (a stream written by an older front) still reads", () => {
  const old = new Packr({ moreTypes: true, useRecords: false }).pack({ ws: "w", env: "production", ms: 5, limit: -1, entriesJson: JSON.stringify([entry()]) });
  expect(decodeWrite(old).entries).toEqual([entry()]);
});

test("a node of the version before stops at a prepared write rather than store it; writes sent before still read", () => {
  const { id: _, ...rest } = entry();
  const block = encodeEntries([rest]);
  const bytes = encodeWrite({ ws: "w", env: "production", ms: 5, limit: 10, prepared: { ids: ["i"], blocks: [block] } });
  expect([bytes[0], bytes[1]]).toEqual([0xc3, 0]); // small: the first part sent plain
  const packr = new Packr({ moreTypes: true, useRecords: false });
  // the version before reads a byte it does not know as a msgpack value, and msgpackr refuses the bytes after it
  expect(() => packr.unpack(bytes)).toThrow("end of buffer not reached");
  // writes of the versions before: blocks with `stripeFilters`, and before those with `filters`
  const { filters, ...others } = block;
  for (const sentBlock of [{ ...others, stripeFilters: filters }, block]) {
    const before = packr.pack({ ws: "w", env: "production", ms: 5, limit: 10, ids: ["i"], blocks: [sentBlock] });
    expect(decodeWrite(Uint8Array.from([0xc2, ...before])).prepared!.blocks[0]).toEqual(block);
  }
  // and a block with neither is refused, not stored unfindable
  const bare = packr.pack({ ws: "w", env: "production", ms: 5, limit: 10, ids: ["i"], blocks: [{ ...block, filters: undefined }] });
  expect(() => decodeWrite(Uint8Array.from([0xc2, ...bare]))).toThrow("upgrade every node");
});
