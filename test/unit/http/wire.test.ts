// The wire shape (interface §2.1): an entry written straight to JSON text, its stored objects spliced in, is
// JSON.stringify of the same entry, byte for byte, whatever its objects hold.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { logEntryText, toLogEntry } from "../../../src/http/wire.ts";
import { IdGenerator } from "../../../src/ids.ts";
import { LEVELS } from "../../../src/schema.ts";
import { Block, type Entry } from "../../../src/storage/format/block.ts";
import { encodeBlock } from "../../../src/storage/format/block-encode.ts";

const generator = new IdGenerator();
const text = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('"', "\\", "</script>", "\u2028", "ü☕", '{"a":[1]}', "\ud800"));
const objects = fc.option(fc.dictionary(fc.oneof(text, fc.constantFrom("__proto__", "1", "10")), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }), {
  nil: null,
});
const draft = fc.record({
  level: fc.constantFrom(...LEVELS),
  action: text.filter((a) => a.length > 0),
  message: fc.option(text, { nil: null }),
  tags: fc.array(text, { maxLength: 3 }),
  clientMs: fc.integer({ min: 0, max: 4_102_444_800_000 }),
  actor: objects,
  target: objects,
  context: objects,
  metadata: objects,
});

test("an entry's JSON text, read from a block or given whole, is JSON.stringify of its wire shape", () => {
  fc.assert(
    fc.property(fc.array(draft, { minLength: 1, maxLength: 20 }), fc.constantFrom("production", "development"), (drafts, env) => {
      const { ms, ids } = generator.next(drafts.length, 1_800_000_000_000);
      const entries: Entry[] = drafts.map((d, i) => ({ ...(d as Omit<Entry, "id">), id: ids[i] }));
      const block = Block.decode(ms, encodeBlock(entries));
      for (let i = 0; i < entries.length; i++) {
        const stored = block.entry(i);
        expect(logEntryText(env, ms, stored)).toBe(JSON.stringify(toLogEntry(env, ms, stored)));
        expect(logEntryText(env, ms, entries[i])).toBe(JSON.stringify(toLogEntry(env, ms, entries[i])));
      }
    }),
    { numRuns: 300 },
  );
});
