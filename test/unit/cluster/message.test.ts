// A write crosses the partition stream unchanged (contract §13): entries and encoded blocks come back as sent.
import { expect, test } from "bun:test";
import { decodeWrite, encodeWrite } from "../../../src/cluster/message.ts";
import { encodeEntries } from "../../../src/storage/encode.ts";
import type { Entry } from "../../../src/storage/block.ts";

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

test("encoded blocks come back with their typed arrays", () => {
  const { id: _, ...rest } = entry();
  const block = encodeEntries([rest]);
  const back = decodeWrite(encodeWrite({ ws: "w", env: "production", ms: 5, limit: 10, prepared: { ids: ["i"], blocks: [block] } }));
  expect(back.prepared!.blocks[0]).toEqual(block);
  expect(back.prepared!.blocks[0].filters[0]).toBeInstanceOf(Uint32Array);
});
