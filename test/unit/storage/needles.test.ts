// A block's filter (needles.ts): it never misses a term of the block, it is folded to its distinct terms, and a term
// it was not built with is rarely reported.
import { expect, test } from "bun:test";
import fc from "fast-check";
import type { Entry } from "../../../src/storage/format/block.ts";
import {
  REGION_WORDS,
  blockFilter,
  filterMayHold,
  pathTerm,
  probeHolds,
  probeOf,
  regionOf,
  regionsOf,
  substringTerms,
  wordTerms,
} from "../../../src/storage/indexes/needles.ts";
import { words } from "../../../src/words.ts";

type Draft = Omit<Entry, "id">;
const draft = (over: Partial<Draft>): Draft => ({
  level: "info",
  action: "a",
  message: null,
  tags: [],
  clientMs: 0,
  actor: null,
  target: null,
  context: null,
  metadata: null,
  ...over,
});

const scalar = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }) /* JSON holds no infinities */,
  fc.boolean(),
);
const objectArb = fc.option(
  fc.dictionary(fc.string({ maxLength: 4 }), fc.oneof(scalar, fc.dictionary(fc.string({ maxLength: 3 }), scalar, { maxKeys: 2 })), { maxKeys: 3 }),
  {
    nil: null,
  },
);

test("a filter holds every message and action trigram and every path's text form of its entries (any text, any case)", () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.record({ message: fc.option(fc.string({ maxLength: 40 }), { nil: null }), action: fc.string({ minLength: 1, maxLength: 20 }), metadata: objectArb }),
        {
          minLength: 1,
          maxLength: 40,
        },
      ),
      (drafts) => {
        const entries = drafts.map((d) => draft(d));
        const filter = blockFilter(entries);
        for (const e of entries) {
          for (const h of substringTerms((e.message ?? "").toLowerCase(), "message")) expect(filterMayHold(filter, [[h]])).toBe(true);
          for (const h of substringTerms(e.action.toLowerCase(), "action")) expect(filterMayHold(filter, [[h]])).toBe(true);
          for (const [key, value] of Object.entries(e.metadata ?? {})) {
            if (typeof value === "string") expect(filterMayHold(filter, [[pathTerm("metadata", [key], value)]])).toBe(true);
            if (typeof value === "number") expect(filterMayHold(filter, [[pathTerm("metadata", [key], JSON.stringify(value))]])).toBe(true);
            if (value !== null && typeof value === "object")
              for (const [inner, v] of Object.entries(value))
                if (typeof v === "boolean") expect(filterMayHold(filter, [[pathTerm("metadata", [key, inner], String(v))]])).toBe(true);
          }
        }
      },
    ),
    { numRuns: 300 },
  );
});

test("a filter holds every full-text word of its messages and actions (any text: ASCII, letters beyond it, sigma, digits)", () => {
  const unit = fc.constantFrom("a", "B", "z", "0", "9", " ", "-", ".", "é", "Σ", "σ", "ς", "İ", "\u212a", "日", "😀", "_");
  const text = fc.string({ unit, maxLength: 30 });
  fc.assert(
    fc.property(fc.array(fc.record({ message: fc.option(text, { nil: null }), action: text }), { minLength: 1, maxLength: 30 }), (drafts) => {
      const entries = drafts.map((d) => draft(d));
      const filter = blockFilter(entries);
      for (const e of entries) {
        for (const t of wordTerms(words(e.message ?? ""), "message")) expect(filterMayHold(filter, [[t]])).toBe(true);
        for (const t of wordTerms(words(e.action), "action")) expect(filterMayHold(filter, [[t]])).toBe(true);
      }
    }),
    { numRuns: 500 },
  );
});

test("a word a filter was not built with is rarely reported, though its trigrams are all there", () => {
  const entries = Array.from({ length: 512 }, (_, i) => draft({ message: `connection ${i} time med ${i % 7 ? "timer" : "medium"} reset` }));
  const filter = blockFilter(entries);
  expect(filterMayHold(filter, [substringTerms("timed", "message")])).toBe(true); // "tim", "ime", "med" are all in it
  expect(filterMayHold(filter, [wordTerms(["connection", "reset"], "message")])).toBe(true);
  let reported = 0;
  const letters = (n: number) => n.toString(26).replace(/[0-9]/g, (d) => "qrstuvwxyz"[Number(d)]); // a word of letters only
  for (let n = 0; n < 2000; n++) if (filterMayHold(filter, [wordTerms([`timed${letters(n)}`], "message")])) reported++;
  expect(reported).toBeLessThan(10);
});

test("a filter holds every trigram and hex gram of messages of hex runs, in either case and beside any letter", () => {
  const hexish = fc.string({ unit: fc.constantFrom(..."0123456789abcdefABCDEF-x İé"), maxLength: 40 });
  fc.assert(
    fc.property(fc.array(fc.record({ message: hexish, action: hexish.filter((a) => a.length > 0) }), { minLength: 1, maxLength: 30 }), (drafts) => {
      const filter = blockFilter(drafts.map((d) => draft(d)));
      for (const { message, action } of drafts) {
        const lowered = message.toLowerCase();
        for (let from = 0; from + 5 <= lowered.length; from++)
          expect(filterMayHold(filter, [substringTerms(lowered.slice(from, from + 8), "message")])).toBe(true);
        expect(filterMayHold(filter, [substringTerms(action.toLowerCase(), "action")])).toBe(true);
      }
    }),
    { numRuns: 300 },
  );
});

test("a hex substring a stripe of hex ids does not hold is rarely reported, though the stripe holds most hex trigrams", () => {
  const hex = (i: number) => (Math.imul(i + 1, 2654435761) >>> 0).toString(16).padStart(8, "0");
  const filter = blockFilter(Array.from({ length: 512 }, (_, i) => draft({ message: `span ${hex(i)} done` })));
  let reported = 0;
  let trigramsOnly = 0;
  for (let i = 10_000; i < 12_000; i++) {
    const six = hex(i).slice(1, 7);
    const terms = substringTerms(six, "message");
    if (filterMayHold(filter, [terms])) reported++;
    if (filterMayHold(filter, [terms.slice(0, 4)])) trigramsOnly++; // the first four terms are its trigrams
  }
  expect(trigramsOnly / 2000).toBeGreaterThan(0.02); // what trigrams alone would name
  expect(reported / 2000).toBeLessThan(0.002);
});

test("a filter is folded to its distinct terms: a thousand repeats of one message cost what one does", () => {
  const one = blockFilter([draft({ message: "the same line, again and again" })]);
  const many = blockFilter(Array.from({ length: 1000 }, () => draft({ message: "the same line, again and again" })));
  expect(regionsOf(many)).toBe(regionsOf(one));
  const varied = blockFilter(Array.from({ length: 1000 }, (_, i) => draft({ message: `request ${i * 7919} for user-${i}` })));
  expect(regionsOf(varied)).toBeGreaterThan(8);
});

test("a term's region is its hash mod the region count, for every hash and every power of two or three times one (property)", () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.nat(20), fc.boolean(), (h, i, three) => {
      const regions = (three ? 3 : 1) * 2 ** i;
      expect(regionOf(h, regions)).toBe(h % regions);
      expect(regionOf(h | 0, regions)).toBe(h % regions); // a hash read as int32 names the same region
    }),
    { numRuns: 5000 },
  );
});

/** setShareOf is the share of a filter's bits that are set (counted apart from the code under test). */
const setShareOf = (words: Uint32Array) => [...words].reduce((n, w) => n + w.toString(2).replaceAll("0", "").length, 0) / (words.length * 32);

test("a filter is folded to the fewest regions, of powers of two and three times one, at which at most 42% of its bits are set", () => {
  for (const n of [1, 7, 60, 200, 512]) {
    const filter = blockFilter(
      Array.from({ length: n }, (_, i) => draft({ message: `request ${i * 7919} for user-${i}`, context: { ip: `10.0.${i % 255}.${i >> 8}` } })),
    );
    const regions = regionsOf(filter);
    const fill = setShareOf(filter);
    const power = regions % 3 === 0 ? regions / 3 : regions; // 2^i or 3·2^i
    expect(power & (power - 1)).toBe(0);
    expect(fill).toBeLessThanOrEqual(0.42);
    // no smaller count of either kind would keep 42%: folding to it sets 1 − (1 − fill)^(regions / smaller)
    const smaller = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256].filter((r) => r < regions);
    for (const r of smaller) expect(1 - (1 - fill) ** (regions / r)).toBeGreaterThan(0.42);
  }
});

test("a filter reports a value it was not built with about once in a thousand, or less", () => {
  const entries = Array.from({ length: 1000 }, (_, i) => draft({ metadata: { order_id: `ord-${i}`, n: i } }));
  const filter = blockFilter(entries);
  let reported = 0;
  for (let i = 1000; i < 101_000; i++) if (filterMayHold(filter, [[pathTerm("metadata", ["order_id"], `ord-${i}`)]])) reported++;
  expect(reported / 100_000).toBeLessThan(0.005);
  // the path is part of the term: the same text under another path is another term
  expect(filterMayHold(filter, [[pathTerm("metadata", ["order_id"], "ord-5")]])).toBe(true);
  expect(filterMayHold(filter, [[pathTerm("actor", ["order_id"], "ord-5")]])).toBe(false);
});

test("a needle holds when all terms of one of its alternatives do", () => {
  const filter = blockFilter([draft({ message: "alpha" }), draft({ message: "omega" })]);
  const alpha = substringTerms("alpha", "message");
  const omega = substringTerms("omega", "message");
  const absent = substringTerms("zzqx", "message");
  expect(filterMayHold(filter, [alpha])).toBe(true);
  expect(filterMayHold(filter, [absent, omega])).toBe(true);
  expect(filterMayHold(filter, [absent])).toBe(false);
  expect(filterMayHold(filter, [[...alpha, ...absent]])).toBe(false);
});

// the filter's bits of a term, as the layout defines them: k bits of one region, stepped by the hash rotated
function referenceHolds(words: Uint32Array, base: number, h: number, k: number): boolean {
  const step = (h << 15) | (h >>> 17) | 1;
  for (let i = 0, x = h; i < k; i++, x = (x + step) >>> 0) if (!(words[base + (x >>> 28)] & (1 << ((x >>> 23) & 31)))) return false;
  return true;
}

test("a term worked out once (probeOf) holds in exactly the regions the layout's k bits say it does", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 2 ** 32 - 1 }),
      fc.constantFrom(4, 6, 10),
      fc.uint32Array({ minLength: 4 * REGION_WORDS, maxLength: 4 * REGION_WORDS }),
      fc.nat(3),
      (h, k, words, region) => {
        const base = region * REGION_WORDS;
        expect(probeHolds(words, base, probeOf({ h, k }))).toBe(referenceHolds(words, base, h, k));
      },
    ),
    { numRuns: 2000 },
  );
  // and they are the bits a filter built with the term sets
  const term = pathTerm("metadata", ["k"], "v");
  const filter = blockFilter([
    { level: "info", action: "a", message: null, tags: [], clientMs: 0, actor: null, target: null, context: null, metadata: { k: "v" } },
  ]);
  expect(referenceHolds(filter, (term.h % regionsOf(filter)) * REGION_WORDS, term.h, term.k)).toBe(true);
});
