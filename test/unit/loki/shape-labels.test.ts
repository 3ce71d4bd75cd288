// An entry as Loki sees it, read off its block's shape and scalars (shape-labels.ts), is exactly what lokiEntry makes of
// the entry parsed: the same labels with the same values in the same order, the same metadata, line, id and time.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { IdGenerator } from "../../../src/ids.ts";
import { lokiEntry } from "../../../src/loki/labels.ts";
import { lokiEntryAt } from "../../../src/loki/shape-labels.ts";
import { Block, type Entry } from "../../../src/storage/format/block.ts";
import { assembleBlock, encodeBlock, encodeWithObjects } from "../../../src/storage/format/block-encode.ts";

const ids = new IdGenerator();
const key = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 8 }),
  fc.constantFrom("service_name", "service", "name", "level", "a.b", "a_b", "0", "12", "__proto__", "constructor", "sluice_id", "tags", "ü-1"),
);
const scalar = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 12 }),
  fc.constantFrom("", '"\\', "\u0000", "\u2028", "ü☕𝄞", "true"),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(1e21, -0, 0.1, 2 ** 53 + 1, -1e-7),
  fc.boolean(),
  fc.constant(null),
);
const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: "small" }, scalar, tie("array"), tie("object")),
  array: fc.array(tie("value"), { maxLength: 3 }),
  object: fc.oneof(
    fc.dictionary(key, tie("value"), { maxKeys: 4 }),
    fc.constant(JSON.parse('{"__proto__":{"x":1},"y":2}')),
    fc.constant({ name: "api" }),
    fc.constant({ name: 7 }),
    fc.constant({ name: true }),
  ),
})).value;
const object = fc.option(fc.dictionary(key, json, { maxKeys: 5 }), { nil: null }) as fc.Arbitrary<Record<string, unknown> | null>;
const drawn = fc.record({
  level: fc.constantFrom("trace", "debug", "info", "warn", "error", "fatal"),
  action: fc.constantFrom("user.login", "a", "ü"),
  message: fc.option(fc.string({ maxLength: 10 }), { nil: null, freq: 4 }),
  tags: fc.array(fc.constantFrom("a", "b,c", "ü"), { maxLength: 3 }),
  clientMs: fc.integer({ min: 0, max: 4e12 }),
  actor: object,
  target: object,
  context: object,
  metadata: object,
});

/** both views of every entry of a block, as [name, value] lists so that the order of the labels counts too */
function views(block: Block) {
  const ordered = (e: ReturnType<typeof lokiEntry>) => ({ ...e, stream: Object.entries(e.stream), metadata: Object.entries(e.metadata) });
  const got = Array.from({ length: block.size }, (_, i) => ordered(lokiEntryAt(block, i, block.message(i), "staging")));
  const want = Array.from({ length: block.size }, (_, i) => ordered(lokiEntry(block.detach(i), "staging")));
  return { got, want };
}

test("lokiEntryAt gives lokiEntry's labels, values and order for any objects (property)", () => {
  fc.assert(
    fc.property(fc.array(drawn, { minLength: 1, maxLength: 60 }), (entries) => {
      const fresh = ids.next(entries.length, 1_700_000_000_000).ids;
      const { got, want } = views(Block.decode(1, encodeBlock(entries.map((e, i) => ({ ...e, id: fresh[i] }) as Entry))));
      expect(got).toEqual(want);
    }),
    { numRuns: 300 },
  );
});

test("lokiEntryAt reads objects stored as sent (spaces, repeated keys, numbers as written, escapes) as lokiEntry does", () => {
  const texts = [
    '[null, null, {"region": "eu", "n": 1.50, "big": 1E3, "n": 2, "e": "\\u00e9\\n", "service": {"name": false}, "service_name": 0.0}, {"a": {"b": -0}}]',
    '[{"id":"u1"},{"doc":{"id":7}},{"service":{"name":"api"},"0":"zero","a.b":1,"a_b":2},null]',
    '[null,null,{"__proto__":{"p":1},"service_name":null,"service":[1]},{"x":[1,{"y":2}],"z":true}]',
    '[null,null,{"spaced" : "key"},null]', // a key before a space reads as a scalar (shaped.ts): such a shape is parsed whole
    null,
  ];
  const entries = texts.map((_, i) => ({ level: "info", action: `act.${i}`, message: `m${i}`, tags: i ? ["t"] : [], clientMs: 1_000 + i })) as Entry[];
  const { columns } = encodeWithObjects(entries, texts);
  const block = Block.decode(1, assembleBlock(ids.next(texts.length, 1_700_000_000_000).ids, columns));
  const { got, want } = views(block);
  expect(got).toEqual(want);
  expect(Object.fromEntries(got[0].stream)).toMatchObject({ n: "2", big: "1000", e: "é\n", service_name: "0" });
  expect(Object.fromEntries(got[1].stream)).toMatchObject({ service_name: "api", _0: "zero", a_b: "2" });
  expect(Object.fromEntries(got[2].stream).service_name).toBe("act.2");
  expect(Object.fromEntries(got[3].stream).spaced).toBe("key");
});
