// The objects column as shapes and leaves (shaped.ts): every JSON text reads back exactly, a search finds exactly
// the entries with a scalar holding the bytes, and columns of like values take far fewer bytes than rows of JSON.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { encodeText } from "../../../src/storage/format/columns.ts";
import { packFramed, packWhole } from "../../../src/storage/format/packed.ts";
import { ShapedColumn, encodeShaped, isShaped } from "../../../src/storage/format/shaped.ts";

const text = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 12 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)), maxLength: 4 }),
  fc.constantFrom("", "a.b", '"\\', ":", "true"),
);
const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    text,
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.constantFrom(1e21, -0, 0.1, 2 ** 53 + 1, -1e-7),
    fc.boolean(),
    fc.constant(null),
    tie("array"),
    tie("object"),
  ),
  array: fc.array(tie("value"), { maxLength: 4 }),
  object: fc.dictionary(text, tie("value"), { maxKeys: 4 }),
})).value;
// what the column is given: JSON.stringify's texts, and any other JSON text (spaces, newlines) or none
const objectsText = fc.oneof(
  json.map((v) => JSON.stringify([v, null, v, null])),
  json.map((v) => JSON.stringify(v, null, 2) ?? "null"),
  fc.constant(null),
);

const read = (texts: (string | null)[]) => {
  const bytes = encodeShaped(texts);
  expect(bytes).toBeDefined();
  expect(isShaped(bytes!)).toBe(true);
  return new ShapedColumn(Buffer.from(bytes!), texts.length); // msgpack hands back Buffers
};

test("a shaped objects column reads back every JSON text exactly, in any order, whatever its shape", () => {
  fc.assert(
    fc.property(fc.array(objectsText, { minLength: 1, maxLength: 40 }), fc.boolean(), (texts, backwards) => {
      const column = read(texts);
      const order = [...texts.keys()];
      if (backwards) order.reverse();
      for (const i of [...order, ...order, ...order]) expect(column.text(i)).toBe(texts[i]); // enough reads to decode whole
    }),
    { numRuns: 400 },
  );
});

test("an entry's scalars, put back into its shape's holes in order, are its JSON text (property)", () => {
  fc.assert(
    fc.property(fc.array(objectsText, { minLength: 1, maxLength: 40 }), (texts) => {
      const column = read(texts);
      for (const i of [...texts.keys(), ...texts.keys(), ...texts.keys()]) {
        const scalars = column.scalars(i); // read often enough to decode the leaves whole
        if (texts[i] === null) expect(scalars).toBeNull();
        else expect(scalars!.shape.split("\u0000").reduce((text, part, j) => text + scalars!.leaves[j - 1] + part)).toBe(texts[i]!);
      }
    }),
    { numRuns: 200 },
  );
});

test("a text that holds the shapes' hole character is not shaped: its block keeps the text encoding", () => {
  expect(encodeShaped(['{"a":"x"}', '["\u0000"]'])).toBeUndefined();
  expect(encodeShaped(['{"\u0000":1}'])).toBeUndefined();
  expect(read(['{"a":"x"}', '["\u0001"]']).text(1)).toBe('["\u0001"]');
});

// every scalar but null, as JSON writes it: what a search looks in
function scalars(v: unknown, out: string[] = []): string[] {
  if (Array.isArray(v)) for (const x of v) scalars(x, out);
  else if (v !== null && typeof v === "object") for (const x of Object.values(v)) scalars(x, out);
  else if (v !== null) out.push(JSON.stringify(v));
  return out;
}

test("a search of a shaped column finds exactly the entries with a scalar whose JSON holds the bytes", () => {
  const values = fc.array(fc.option(json, { nil: null }), { minLength: 1, maxLength: 40 });
  fc.assert(
    fc.property(
      values,
      fc.oneof(
        text.filter((t) => t.length > 0),
        fc.constantFrom("1", "e", "tr", '"'),
      ),
      (objects, needle) => {
        const texts = objects.map((v) => (v === null ? null : JSON.stringify([v])));
        const utf8 = Buffer.from(needle);
        const expected = objects.flatMap((v, i) => (v !== null && scalars(v).some((s) => Buffer.from(s).includes(utf8)) ? [i] : []));
        expect(read(texts).entriesWith(utf8)).toEqual(expected);
      },
    ),
    { numRuns: 400 },
  );
});

test("a shaped column of a thousand service objects takes at most two thirds of the bytes of their JSON rows", () => {
  const texts = Array.from({ length: 1000 }, (_, i) =>
    JSON.stringify([
      { id: `user-${(i * 7919) % 1000}`, role: i % 3 ? "member" : "admin" },
      null,
      { ip: `10.0.${(i * 31) % 256}.${(i * 17) % 256}`, request_id: `req-${i}` },
      { status_code: [200, 404, 500][i % 3], duration_ms: (i * 131) % 997 },
    ]),
  );
  const shaped = packWhole(encodeShaped(texts)!).length;
  const rows = packFramed(texts.length, (start, end) => encodeText(texts.slice(start, end))).length;
  expect(shaped).toBeLessThan((rows * 2) / 3);
});
