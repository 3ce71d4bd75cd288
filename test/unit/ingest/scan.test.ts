// JsonScan: the streaming nesting check agrees with a plain byte-at-a-time state machine; every size bound is
// at least the UTF-8 size of JSON.stringify of what JSON.parse makes of the text, and every nesting at least that
// of the parsed value (exactly, but for repeated keys), whatever the chunking.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { JsonScan } from "../../../src/ingest/scan.ts";

/** deepest is the reference: the nesting depth of JSON-like text, brackets in strings (with escapes) not counting. */
function deepest(bytes: Uint8Array): number {
  let depth = 0,
    max = 0,
    inString = false,
    escaped = false;
  for (const b of bytes) {
    if (inString) {
      if (escaped) escaped = false;
      else if (b === 0x5c) escaped = true;
      else if (b === 0x22) inString = false;
    } else if (b === 0x22) inString = true;
    else if (b === 0x5b || b === 0x7b) max = Math.max(max, ++depth);
    else if (b === 0x5d || b === 0x7d) depth--;
  }
  return max;
}

test("the nesting limit holds exactly as a byte-at-a-time reading says, however the body is cut into chunks (20,000 cases)", () => {
  const unit = fc.constantFrom("[", "]", "{", "}", '"', "\\", "a", "é", " ");
  fc.assert(
    fc.property(
      fc.string({ unit, maxLength: 60 }),
      fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 10 }),
      fc.integer({ min: 0, max: 8 }),
      (text, cuts, limit) => {
        const bytes = new TextEncoder().encode(text);
        const meter = new JsonScan(limit);
        let ok = true;
        for (let at = 0, c = 0; at < bytes.length && ok; c++) {
          const n = cuts[c % cuts.length];
          ok = meter.feed(bytes.subarray(at, at + n));
          at += n;
        }
        expect(ok).toBe(deepest(bytes) <= limit);
      },
    ),
    { numRuns: 20_000 },
  );
});

const encoder = new TextEncoder();
const utf8 = (s: string) => encoder.encode(s).length;
const stringifiedSize = (text: string) => utf8(JSON.stringify(JSON.parse(text)));

/** scanned feeds text to a scan in chunks of the given sizes (cycled) and returns its entry bounds. */
function scanned(text: string, cuts: number[] = [1 << 30]) {
  const bytes = encoder.encode(text);
  const scan = new JsonScan(1000);
  for (let at = 0, c = 0; at < bytes.length; c++) {
    const n = cuts[c % cuts.length];
    expect(scan.feed(bytes.subarray(at, at + n))).toBe(true);
    at += n;
  }
  return scan.entryBounds(false);
}

/** nesting is how deeply the values inside a value nest, the value itself not counting (an object in it is 1). */
function nesting(v: unknown): number {
  if (typeof v !== "object" || v === null) return 0;
  const depth = (x: unknown): number => (typeof x === "object" && x !== null ? 1 + Math.max(0, ...Object.values(x).map(depth)) : 0);
  return Math.max(0, ...Object.values(v).map(depth));
}

// JSON text as senders write it: odd spacing, every escape, numbers that stringify longer than they were written
const ws = fc.constantFrom("", "", " ", "\n  ", "\t", "\r\n");
const digits = (min: number, max: number) => fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: min, maxLength: max });
const integer = fc.oneof(
  fc.constant("0"),
  fc.tuple(fc.constantFrom(..."123456789"), digits(0, 24)).map(([a, b]) => a + b),
  digits(16, 24).map((d) => `9${d.replace(/./g, "9")}`),
);
const number = fc
  .tuple(
    fc.constantFrom("", "-"),
    integer,
    fc.option(digits(1, 20), { nil: undefined }),
    fc.option(fc.tuple(fc.constantFrom("e", "E", "e+", "e-", "E-"), digits(1, 3)), { nil: undefined }),
  )
  .map(([sign, int, frac, exp]) => sign + int + (frac === undefined ? "" : `.${frac}`) + (exp === undefined ? "" : exp[0] + exp[1]))
  .filter((t) => Number.isFinite(JSON.parse(t)));
const char = fc.oneof(
  fc.constantFrom("a", "Z", " ", "é", "😀", "\u2028", '\\"', "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "e", "1"),
  fc.integer({ min: 0, max: 0xffff }).map((c) => `\\u${c.toString(16).padStart(4, "0")}`),
);
const string = fc.array(char, { maxLength: 12 }).map((cs) => `"${cs.join("")}"`);
const { value } = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    number,
    string,
    fc.constantFrom("true", "false", "null"),
    fc.tuple(ws, fc.array(fc.tuple(ws, tie("value"), ws), { maxLength: 4 })).map(([w, xs]) => `[${w}${xs.map((x) => x.join("")).join(",")}]`),
    fc
      .tuple(ws, fc.array(fc.tuple(ws, fc.constantFrom('"a"', '"b"', '"e1"', '"__proto__"'), ws, ws, tie("value"), ws), { maxLength: 4 }))
      .map(([w, ms]) => `{${w}${ms.map(([a, k, b, c, v, d]) => `${a}${k}${b}:${c}${v}${d}`).join(",")}}`),
  ),
}));

test("each element's size bound is at least the UTF-8 size of JSON.stringify of it parsed, and none only for an exponent; its nesting bound holds (10,000 cases)", () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(ws, value, ws), { minLength: 1, maxLength: 5 }),
      ws,
      fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 5 }),
      (elements, w, cuts) => {
        const texts = elements.map(([a, v, b]) => a + v + b);
        const bounds = scanned(`${w}[${texts.join(",")}]${w}`, cuts);
        expect(bounds.size.length).toBe(texts.length);
        texts.forEach((t, i) => {
          expect(bounds.nesting[i]).toBeGreaterThanOrEqual(nesting(JSON.parse(t))); // a repeated key's dropped value may nest deeper
          expect(scanned(`[${JSON.stringify(JSON.parse(t))}]`).nesting).toEqual([nesting(JSON.parse(t))]); // no repeated keys: exact
          expect(bounds.size[i]).toBeGreaterThanOrEqual(stringifiedSize(t));
          const exponent = /[0-9][eE]/.test(t.replace(/"(?:[^"\\]|\\.)*"/g, '""'));
          expect(bounds.size[i] === Infinity).toBe(exponent);
        });
      },
    ),
    { numRuns: 10_000 },
  );
});

test("a body that is one object has one size bound, at least its size as stringified, and one nesting bound", () => {
  fc.assert(
    fc.property(value, ws, fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 5 }), (v, w, cuts) => {
      const text = `${w}{"a":${w}${v}${w}}${w}`;
      const bounds = scanned(text, cuts);
      expect(bounds.size.length).toBe(1);
      expect(bounds.size[0]).toBeGreaterThanOrEqual(stringifiedSize(text));
      expect(bounds.nesting[0]).toBeGreaterThanOrEqual(nesting(JSON.parse(text)));
      expect(scanned(JSON.stringify(JSON.parse(text))).nesting).toEqual([nesting(JSON.parse(text))]);
    }),
    { numRuns: 2_000 },
  );
});

test("a number can stringify longer than its text: by one character without an exponent, by any number with one", () => {
  expect(stringifiedSize("99999999999999999999")).toBe(21); // 20 characters written
  expect(scanned("[99999999999999999999]").size).toEqual([40]); // 20 bytes and 20 digits
  expect(stringifiedSize("1e20")).toBe(21);
  expect(scanned("[1e20, true, false]").size).toEqual([Infinity, 5, 6]); // the e of true or false is no exponent
});
