// Parts (storage/format/part.ts): blocks merged into one value read back exactly as they were stored, through every view
// the engine reads them by; a pointer reads back as written, and a damaged one is refused.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { IdGenerator } from "../../../src/ids.ts";
import { LEVELS, type Level } from "../../../src/schema.ts";
import { Block, type Entry } from "../../../src/storage/format/block.ts";
import { encodeBlock } from "../../../src/storage/format/block-encode.ts";
import { encodePart, encodePointer, pointerOf } from "../../../src/storage/format/part.ts";

const T0 = Date.UTC(2026, 10, 28);
const CONTROLS = Array.from({ length: 32 }, (_, c) => String.fromCharCode(c)).join("");
const text = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom("", "login ok", "Straße ΣΊΣΥΦΟΣ", `${CONTROLS}x`, "\u212aelvin", "x".repeat(70)));
const json = fc.oneof(fc.constant(null), fc.constantFrom(1e21, -0, 0.1, 2 ** 53 + 2, -5), text, fc.array(fc.integer(), { maxLength: 3 }), fc.constant({}));
const objectArb = fc.oneof(
  fc.constant(null),
  fc.dictionary(fc.constantFrom("a", "a.b", "id", "__proto__", "ü"), json, { maxKeys: 3 }),
  fc.constant({ "a.b": 1, a: { b: 2 } }),
);
const entryArb = fc.record({
  level: fc.constantFrom(...LEVELS),
  action: fc.oneof(text, fc.constantFrom("user.login", "order.paid")),
  message: fc.oneof(fc.constant(null), text),
  tags: fc.uniqueArray(fc.oneof(text, fc.constantFrom("a", "b")), { maxLength: 3 }),
  clientMs: fc.oneof(fc.integer({ min: T0 - 1e6, max: T0 + 1e6 }), fc.integer({ min: 0, max: Date.UTC(9999, 11, 31) })),
  actor: objectArb,
  target: objectArb,
  context: objectArb,
  metadata: objectArb,
});
/** blocks of entries at ascending milliseconds, some at the same one (two writers), as the store keys them */
const blocksArb = fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.array(entryArb, { minLength: 1, maxLength: 6 })), { minLength: 1, maxLength: 6 });

const view = (b: Block, i: number) => {
  const e = b.entry(i);
  return {
    id: e.id,
    level: e.level,
    action: e.action,
    message: e.message,
    tags: e.tags,
    clientMs: e.clientMs,
    objects: b.objectsText(i),
    actor: e.actor,
    metadata: e.metadata,
  };
};
/** what every way the engine reads a block gives, for one block */
function reading(b: Block, needles: string[]) {
  const levels = b.codes("level")!;
  const tags = b.tagCodes()!;
  return {
    size: b.size,
    serverMs: b.serverMs,
    entries: Array.from({ length: b.size }, (_, i) => view(b, i)),
    levels: Array.from(levels.codes, (c) => levels.values[c]),
    actions: Array.from(b.codes("action")!.codes, (c) => b.codes("action")!.values[c]),
    tags: Array.from({ length: b.size }, (_, i) => Array.from(tags.codes.subarray(tags.starts[i], tags.starts[i + 1]), (c) => tags.values[c])),
    found: needles.map((n) => [b.messagesWith(Buffer.from(n)), b.objectsWith(Buffer.from(n)), b.messagesFolding(Buffer.from(n.toLowerCase()))]),
    raw: b.rawSize(),
    positions: Array.from({ length: b.size }, (_, i) => b.indexOf(b.id(i))),
  };
}

test("a block merged into a part reads back exactly as stored: every field, column, search and size, for any entries", () => {
  fc.assert(
    fc.property(blocksArb, fc.array(fc.constantFrom("login", "ok", "a", "x", "ΣΊΣ", "elvin", "\u0001"), { maxLength: 3 }), (drawn, needles) => {
      const writers = [new IdGenerator(), new IdGenerator()];
      let ms = T0;
      const members = drawn.map(([step, entries], k) => {
        ms += step;
        const { ids } = writers[k % 2].next(entries.length, ms);
        const block = entries.map((e, i) => ({ ...e, level: e.level as Level, id: ids[i] }) as Entry);
        return { ms, value: encodeBlock(block) };
      });
      const part = encodePart(members).value;
      let start = 0;
      for (const { ms, value } of members) {
        const stored = Block.decode(ms, value);
        const merged = Block.decode(members[0].ms, part).slice(ms, start, stored.size);
        expect(reading(merged, needles)).toEqual(reading(stored, needles));
        start += stored.size;
      }
    }),
    { numRuns: 300 },
  );
});

test("a pointer reads back as written", () => {
  fc.assert(
    fc.property(fc.record({ start: fc.nat(), size: fc.nat(), last: fc.boolean() }), (p) => {
      expect(pointerOf(encodePointer(p))).toEqual(p);
    }),
  );
});

test("a damaged pointer is refused with an error saying so, never read past its end; a block value is never taken for a pointer", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 64 }), (tail) => {
      const bytes = new Uint8Array([0xc1, ...tail]);
      try {
        const p = pointerOf(bytes)!;
        expect(Number.isInteger(p.start) && Number.isInteger(p.size)).toBe(true);
      } catch (e) {
        expect(String(e)).toContain("damaged");
      }
    }),
  );
  const block = encodeBlock([
    {
      id: new IdGenerator().next(1, T0).ids[0],
      level: "info",
      action: "a",
      message: null,
      tags: [],
      clientMs: T0,
      actor: null,
      target: null,
      context: null,
      metadata: null,
    },
  ]);
  expect(pointerOf(block)).toBeUndefined();
});

test("a slice that runs past its part is refused", () => {
  const { ids } = new IdGenerator().next(2, T0);
  const { value: part } = encodePart([
    {
      ms: T0,
      value: encodeBlock(
        ids.map((id) => ({ id, level: "info", action: "a", message: "m", tags: [], clientMs: T0, actor: null, target: null, context: null, metadata: null })),
      ),
    },
  ]);
  expect(() => Block.decode(T0, part).slice(T0, 1, 2)).toThrow("damaged");
});
