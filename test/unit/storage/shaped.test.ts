// The objects column as shapes and leaves (shaped.ts): every JSON text reads back exactly, a search finds exactly
// the entries with a scalar holding the bytes, and columns of like values take far fewer bytes than rows of JSON.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { damagedCopies, readsOrRefuses } from "../../helpers/damaged.ts";
import { encodeText } from "../../../src/storage/format/text-column.ts";
import { packFramed, packWhole } from "../../../src/storage/format/packed.ts";
import { PlacedLeaves } from "../../../src/storage/format/places.ts";
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

// a leaf's text around its number: no digit in it, so the number is the leaf's one run of digits
const around = fc.oneof(
  fc.constantFrom("", "-", "req-", "user_", "é", '"', "a-b."),
  fc.string({ maxLength: 4 }).map((t) => t.replace(/[0-9]/g, "")),
);
const whole = fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.constantFrom(0, 10 ** 15 - 1, -(10 ** 15 - 1), 10 ** 15, 2 ** 53), fc.maxSafeInteger());
const PLACED = "N".charCodeAt(0);

test("a place of numbered leaves (one prefix, a whole number, one suffix) reads back every text exactly, whatever the numbers (property)", () => {
  fc.assert(
    fc.property(
      around,
      around,
      fc.uniqueArray(whole, { minLength: 1, maxLength: 60 }),
      fc.constantFrom("-0", "007", "1e3", "5.5", null),
      (prefix, suffix, numbers, odd) => {
        const leaves = numbers.map((n) => `${prefix}${n}${suffix}`);
        if (odd !== null) leaves.splice(leaves.length >> 1, 0, `${prefix}${odd}${suffix}`); // a leaf whose digits are not its number's own text
        const texts = leaves.map((leaf, i) => JSON.stringify([{ id: leaf, n: numbers[i % numbers.length] }]));
        // the odd one as a number's text too, as a text not written by JSON.stringify may have it
        const oddNumber = odd === null ? [] : [JSON.stringify([{ id: "x", n: 0 }]).replace(":0}", `:${odd}}`)];
        const column = read([...texts, ...oddNumber]);
        if (odd !== null) expect(column.text(texts.length)).toBe(oddNumber[0]);
        for (const i of [...texts.keys(), ...texts.keys()]) expect(column.text(i)).toBe(texts[i]);
        // the JSON numbers (all distinct: no dictionary) are stored apart when every one has at most 15 digits
        expect(encodeShaped(texts)![0] === PLACED).toBe(numbers.every((n) => Math.abs(n) < 10 ** 15));
      },
    ),
    { numRuns: 400 },
  );
});

// entries whose places are stored apart: few distinct values, numbers between the same texts, free text
const placeEntry = fc.record({
  role: fc.constantFrom("admin", "member", "ünïcode", "", "7"),
  ip: fc.tuple(fc.nat(300), fc.nat(300), fc.constantFrom(0, 10, 255)).map(([a, b, c]) => `10.${a}.${b}.${c}`),
  id: fc.integer({ min: -5, max: 1e6 }).map((n) => `req-${n}`),
  code: fc.constantFrom(200, 404, 500, -1),
  note: fc.string({ maxLength: 6 }),
});

test("a column with places stored apart (a dictionary, numbers) reads back every text, and a search finds exactly the entries holding the bytes (property)", () => {
  fc.assert(
    fc.property(fc.array(fc.option(placeEntry, { nil: null }), { minLength: 1, maxLength: 200 }), fc.nat(), fc.nat(8), (objects, pick, cut) => {
      const texts = objects.map((o) => (o === null ? null : JSON.stringify([o])));
      const column = read(texts);
      for (const i of [...texts.keys(), ...texts.keys()]) expect(column.text(i)).toBe(texts[i]);
      const leaves = objects.flatMap((o) => (o === null ? [] : scalars(o)));
      const leaf = leaves[pick % Math.max(1, leaves.length)] ?? "x";
      const needle = leaf.slice(cut % leaf.length, (cut % leaf.length) + 1 + (pick % 5)) || leaf;
      const expected = objects.flatMap((o, i) => (o !== null && scalars(o).some((t) => t.includes(needle)) ? [i] : []));
      expect(column.entriesWith(Buffer.from(needle))).toEqual(expected);
    }),
    { numRuns: 300 },
  );
});

test("a search of a numbered column finds exactly the entries whose leaf holds the bytes", () => {
  const texts = Array.from({ length: 300 }, (_, i) => JSON.stringify([{ request_id: `req-${1000 + i}`, status: [200, 404][i % 2] }]));
  expect(encodeShaped(texts)![0]).toBe(PLACED);
  const column = read(texts);
  expect(column.entriesWith(Buffer.from('"req-1017"'))).toEqual([17]);
  expect(column.entriesWith(Buffer.from("404"))).toEqual(texts.flatMap((_, i) => (i % 2 ? [i] : [])));
  expect(column.entriesWith(Buffer.from("req-12"))).toEqual(Array.from({ length: 100 }, (_, i) => 200 + i));
  // 0 is a number of one digit: ".0" starts a run of an address with it, "0." ends one, "-0\"" is a whole run
  const zeros = Array.from({ length: 100 }, (_, i) => JSON.stringify([{ ip: `10.0.${i % 3}.${i}`, id: `req-${i}` }]));
  const zeroColumn = read(zeros);
  const every = zeros.map((_, i) => i);
  expect(zeroColumn.entriesWith(Buffer.from(".0"))).toEqual(every); // "10.0." in each: a run of 0 after a dot
  expect(zeroColumn.entriesWith(Buffer.from("0."))).toEqual(every);
  expect(zeroColumn.entriesWith(Buffer.from('-0"'))).toEqual([0]);
});

test("a search passes over a place whose head rules the needle out without decoding its codes or numbers", () => {
  // heads of a dictionary and of numbers over 3 rows, with no codes or numbers behind them: decoding either fails
  const leaves = new PlacedLeaves(
    [
      [1, ["admin", "member"]],
      [2, ["req-", ""], [0]],
    ],
    new Uint8Array(0),
    [3, 3],
  );
  expect(leaves.rowsHolding(0, "root")).toEqual([]); // in no value of the dictionary
  expect(leaves.rowsHolding(1, "10.0.7.42")).toEqual([]); // a dot: in no leaf "req-<number>"
  expect(leaves.rowsHolding(1, "req-01")).toEqual([]); // a number's own text never starts with 0
  expect(() => leaves.rowsHolding(0, "adm")).toThrow("damaged");
  expect(() => leaves.rowsHolding(1, "req-1")).toThrow("damaged");
});

test("request ids, addresses and roles stored apart take at most two thirds of the bytes of the same as texts", () => {
  // a leading zero keeps a run of digits a text: its number would not give it back
  const texts = (zero: string) =>
    Array.from({ length: 1000 }, (_, i) =>
      JSON.stringify([
        { request_id: `req-${zero}${5_000_000 + i}`, ip: `10.${zero}${(i * 7) % 256}.${zero}${(i * 13) % 256}.1`, role: i % 3 ? "member" : "admin" },
      ]),
    );
  const apart = encodeShaped(texts(""))!;
  const asText = encodeShaped(texts("0").map((t) => t.replaceAll('"member"', '"member0"').replaceAll('"admin"', '"admin0"')))!;
  expect([apart[0], asText[0]]).toEqual([PLACED, PLACED]); // the roles' place only: the others are texts
  expect(packWhole(apart).length).toBeLessThan((packWhole(asText).length * 2) / 3);
});

test("a damaged column with places stored apart reads as an error or as texts, never hangs or crashes (fuzz)", () => {
  const texts = Array.from({ length: 20 }, (_, i) => JSON.stringify([{ id: `u-${i * 3}`, n: i - 5, s: "x", role: i % 2 ? "a" : "b" }]));
  const good = encodeShaped(texts)!;
  expect(good[0]).toBe(PLACED);
  fc.assert(
    fc.property(damagedCopies(good), (bytes) =>
      readsOrRefuses(() => {
        const column = new ShapedColumn(bytes, texts.length);
        for (let i = 0; i < texts.length; i++) expect(typeof (column.text(i) ?? "")).toBe("string");
        expect(Array.isArray(column.entriesWith(Buffer.from("1")))).toBe(true);
      }),
    ),
    { numRuns: 3_000 },
  );
});
