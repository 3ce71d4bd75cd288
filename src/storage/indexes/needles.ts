// needles: a block's filters of the rare values a person looks for, and the query side's needles to test them with.
//
// A block has a filter per stripe of STRIPE entries, so that a rare value names the few entries to check, and a
// value with few letters (hex, digits), whose trigrams a whole block of 1,000 entries holds nearly all, stays rare.
// A filter is a blocked Bloom filter (one 512-bit region per term, some bits set in it) of the block's terms:
//   - every lowercased message trigram (3 UTF-16 units), for `message~`, a message literal and message `=`;
//   - every lowercased trigram of its distinct actions, for `action~`;
//   - but no trigram with an ASCII unit other than [a-z0-9] (a space, punctuation): half of a real log line's distinct
//     trigrams are such, and a needle of words names its stripes by its other trigrams as well;
//   - in both, every 5 characters of a run of hex digits ([0-9a-f], so digits too): hex has only 4,096 trigrams,
//     which a stripe of ids and hashes holds most of, and a rare id would otherwise name most stripes;
//   - in both, every full-text word (words.ts) of 3 or more units without a digit, for `@` and free words (shorter
//     ones are in nearly every stripe, as short trigrams are): a rare word made of common
//     trigrams ("timed") would otherwise name most stripes; a word with a digit (a number, an id) is most often
//     rare by its trigrams and hex grams already, and would nearly double the distinct terms of a stripe;
//   - every scalar leaf of actor, target, context and metadata as (facet, path, text form), for `path=`.
// A filter has R regions, R a power of two or three times one, and a term's region is its hash mod R, so folding a
// filter to R/2 (or R/3) ORs regions r + R/2 (r + R/3, r + 2R/3) into r and keeps every term findable: a filter is
// built at three times a power of two for all the block's terms counted with repeats, then folded to the fewest
// regions that keep at most MAX_FILL of its bits set (by powers of two alone, a stripe that needs 65 regions would
// take 128). A path value is most often a needle alone, so it sets PATH_K bits; a word, WORD_K (one
// to three a query); a trigram, TRIGRAM_K: a substring brings several. A filter only says "may hold": the executor
// checks each entry.
import type { Entry } from "../format/block.ts";
import { words } from "../../words.ts";

/** Bits a term counted with repeats gets in a filter as first built. */
const FILTER_BITS = 10;
/** At most this share of a folded filter's bits is set: a path value's false rate grows as its tenth power (bench/NOTES.md). */
const MAX_FILL = 0.42;
const PATH_K = 10;
const TRIGRAM_K = 4;
const HEX_GRAM_K = 4;
const WORD_K = 6;
const WORD_MIN = 3;
/** Hex digits of a hex gram: 20 bits, so a gram is its own exact value before hashing. */
const HEX_GRAM = 5;
/** A region is 512 bits: sixteen 32-bit words. */
export const REGION_WORDS = 16;
const REGION_BITS = 512;

const MESSAGE = 0x6d3a; // domain seeds: a message trigram, an action trigram and a path value never share a hash by design
const ACTION = 0x613a;
const PATH = 0x703a;
const MESSAGE_WORD = 0x6d77;
const ACTION_WORD = 0x6177;
const FACETS = ["actor", "target", "context", "metadata"] as const;

/** Entries per stripe: one filter each. */
export const STRIPE = 512;

/** FilterTerm is a term as a filter holds it: its hash and how many bits it sets. */
export interface FilterTerm {
  h: number;
  k: number;
}

/** Needle is what a query term needs of a block: all terms of some alternative. */
export type Needle = readonly (readonly FilterTerm[])[];

function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** heldUnit tells whether a lowercased UTF-16 unit may be part of a held trigram: [a-z0-9] or beyond ASCII. */
const heldUnit = (c: number): boolean => c > 0x7f || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39);

// two multiplications and a shift: the low bits pick the region, the high ones the bits in it
function trigramHash(a: number, b: number, c: number, seed: number): number {
  const h = Math.imul(((a << 16) | b) ^ Math.imul(c ^ seed, 0x9e3779b1), 0x85ebca6b);
  return (h ^ (h >>> 13)) >>> 0;
}

// FNV-1a over UTF-16 units, continued from `h`
function hashOn(h: number, s: string): number {
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h;
}
const SEPARATOR = 0x10001; // not a UTF-16 unit: a path's keys and its value never run together

/** pathHash is the running hash of a facet's path, one key at a time (pathTerm finishes it with a value). */
const facetHash = (facet: (typeof FACETS)[number]) => hashOn(0x811c9dc5 ^ PATH, facet);
const keyHash = (h: number, key: string) => hashOn(Math.imul(h ^ SEPARATOR, 0x01000193), key);
const valueTerm = (h: number, text: string) => fmix(hashOn(Math.imul(h ^ (SEPARATOR + 1), 0x01000193), text));

/** pathTerm is the hash of a scalar at a path whose text form (match.ts textForm) is `text`. */
export function pathTerm(facet: (typeof FACETS)[number], path: readonly string[], text: string): FilterTerm {
  return { h: valueTerm(path.reduce(keyHash, facetHash(facet)), text), k: PATH_K };
}

// the value of a lowercased hex digit, or -1
const hexValue = (c: number): number => (c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1);
// a hex gram's 20-bit value, apart from any trigram's hash by the seed
const hexGramHash = (gram: number, seed: number): number => fmix(gram ^ Math.imul(seed, 0x9e3779b1));

/**
 * substringTerms lists what a filter holds of any text that has `lowered` (a lowercased text) as a substring:
 * its trigrams of held units (none when it is shorter than 3 units) and the hex grams of its runs of hex digits.
 */
export function substringTerms(lowered: string, domain: "message" | "action"): FilterTerm[] {
  const seed = domain === "message" ? MESSAGE : ACTION;
  const out: FilterTerm[] = [];
  for (let i = 0; i + 2 < lowered.length; i++) {
    const [a, b, c] = [lowered.charCodeAt(i), lowered.charCodeAt(i + 1), lowered.charCodeAt(i + 2)];
    if (heldUnit(a) && heldUnit(b) && heldUnit(c)) out.push({ h: trigramHash(a, b, c, seed), k: TRIGRAM_K });
  }
  let run = 0;
  let gram = 0;
  for (let i = 0; i < lowered.length; i++) {
    const v = hexValue(lowered.charCodeAt(i));
    run = v < 0 ? 0 : run + 1;
    gram = ((gram << 4) | (v & 15)) & 0xfffff;
    if (run >= HEX_GRAM) out.push({ h: hexGramHash(gram, seed), k: HEX_GRAM_K });
  }
  return out;
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

const DIGIT = /\p{N}/u;
const wordTerm = (w: string, seed: number): FilterTerm => ({ h: fmix(hashOn(FNV_OFFSET ^ seed, w)), k: WORD_K });

/**
 * wordTerms lists what a filter holds of a text whose full-text words (words.ts) include every one of `need`: a
 * word without a digit as itself (none when shorter than WORD_MIN); a word with one by its substringTerms, unless it has a sigma, which lowercases
 * by context and so may not be a substring of the text lowercased whole.
 */
export function wordTerms(need: readonly string[], domain: "message" | "action"): FilterTerm[] {
  const seed = domain === "message" ? MESSAGE_WORD : ACTION_WORD;
  return need.flatMap((w) =>
    !DIGIT.test(w) ? (w.length >= WORD_MIN ? [wordTerm(w, seed)] : []) : w.includes("σ") || w.includes("ς") ? [] : substringTerms(w, domain),
  );
}

/** heldAsWords tells whether a filter holds every one of `need` (full-text words) as a word of its own (wordTerms). */
export function heldAsWords(need: readonly string[]): boolean {
  return need.length > 0 && need.every((w) => !DIGIT.test(w) && w.length >= WORD_MIN);
}

/** FilterBuilder gathers a block's terms into a filter sized for them. */
class FilterBuilder {
  private words: Uint32Array;
  private regions: number;
  constructor(termsAtMost: number) {
    this.regions = 3 * pow2AtLeast(Math.ceil((Math.max(1, termsAtMost) * FILTER_BITS) / REGION_BITS / 3));
    this.words = new Uint32Array(this.regions * REGION_WORDS);
  }

  add(h: number, k: number): void {
    setBits(this.words, regionOf(h, this.regions) * REGION_WORDS, h, k);
  }

  /**
   * addText adds substringTerms of a text lowercased and the wordTerms of its words; ASCII lowercases by character
   * and its words are runs of [a-z0-9], so it is read as it is, uncopied, in one pass.
   */
  addText(text: string, domain: "message" | "action"): void {
    const n = text.length;
    for (let i = 0; i < n; i++) if (text.charCodeAt(i) > 0x7f) return this.addUnicode(text, domain);
    const seed = domain === "message" ? MESSAGE : ACTION;
    const wordSeed = FNV_OFFSET ^ (domain === "message" ? MESSAGE_WORD : ACTION_WORD);
    let a = 0;
    let b = 0;
    let run = 0;
    let gram = 0;
    let inWord = false;
    let digit = false; // the word being read has a digit: not held as a word
    let word = 0; // the running hash of the word being read (hashOn's)
    let start = 0;
    for (let i = 0; i <= n; i++) {
      const c = i < n ? lowerAscii(text.charCodeAt(i)) : 0x20;
      const letter = c >= 0x61 && c <= 0x7a;
      if (letter || (c >= 0x30 && c <= 0x39)) {
        if (!inWord) start = i;
        word = Math.imul((inWord ? word : wordSeed) ^ c, FNV_PRIME);
        digit = inWord ? digit || !letter : !letter;
        inWord = true;
      } else if (inWord) {
        if (!digit && i - start >= WORD_MIN) this.add(fmix(word), WORD_K);
        inWord = false;
      }
      if (i === n) break;
      if (i >= 2 && heldUnit(a) && heldUnit(b) && heldUnit(c)) this.add(trigramHash(a, b, c, seed), TRIGRAM_K);
      a = b;
      b = c;
      const v = hexValue(c);
      run = v < 0 ? 0 : run + 1;
      gram = ((gram << 4) | (v & 15)) & 0xfffff;
      if (run >= HEX_GRAM) this.add(hexGramHash(gram, seed), HEX_GRAM_K);
    }
  }

  private addUnicode(text: string, domain: "message" | "action"): void {
    for (const t of substringTerms(text.toLowerCase(), domain)) this.add(t.h, t.k);
    const seed = domain === "message" ? MESSAGE_WORD : ACTION_WORD;
    for (const w of words(text)) if (!DIGIT.test(w) && w.length >= WORD_MIN) this.add(wordTerm(w, seed).h, WORD_K);
  }

  /** addLeaves adds every scalar under `value`, whose path so far hashes to `h` (pathTerm's terms). */
  addLeaves(h: number, value: unknown): void {
    if (typeof value === "string") this.add(valueTerm(h, value), PATH_K);
    else if (typeof value === "number")
      this.add(valueTerm(h, String(value)), PATH_K); // a finite number's JSON text
    else if (typeof value === "boolean") this.add(valueTerm(h, value ? "true" : "false"), PATH_K);
    else if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      for (const key in value) if (Object.hasOwn(value, key)) this.addLeaves(keyHash(h, key), (value as Record<string, unknown>)[key]);
    }
  }

  /** done folds the filter to the fewest regions that keep at most MAX_FILL of its bits set (foldedRegions). */
  done(): Uint32Array {
    const to = foldedRegions(this.regions, setShare(this.words));
    let words = this.words;
    let regions = this.regions;
    if ((to & (to - 1)) === 0) [words, regions] = [fold(words, regions, 3), regions / 3]; // to a power of two: 3·2^j → 2^j first
    while (regions > to) [words, regions] = [fold(words, regions, 2), regions / 2];
    return regions === this.regions ? words : words.slice(); // a copy: the built filter's larger buffer is let go
  }
}

/**
 * foldedRegions is the fewest regions, of those a filter of `regions` (three times a power of two) folds to, at which
 * the share of bits set stays at most MAX_FILL, from the share `fill` set now: folding to R' regions sets
 * 1 − (1 − fill)^(regions / R') of them, as terms' bits fall at random.
 */
export function foldedRegions(regions: number, fill: number): number {
  if (fill >= 1) return regions;
  const least = (regions * Math.log1p(-fill)) / Math.log1p(-MAX_FILL);
  let best = regions;
  for (let r = regions; r >= 1 && r % 3 === 0; r /= 2) if (r >= least && r < best) best = r;
  for (let r = regions / 3; r >= 1; r /= 2) if (r >= least && r < best) best = r;
  return best;
}

/** fold ORs a filter of `regions` into regions / by (by divides regions): region r + i·regions/by into r. */
function fold(words: Uint32Array, regions: number, by: number): Uint32Array {
  const size = (regions / by) * REGION_WORDS;
  for (let part = 1; part < by; part++) for (let i = 0; i < size; i++) words[i] |= words[part * size + i]; // in place: the rest is dropped
  return words.subarray(0, size);
}

/** setShare is the share of a filter's bits that are set. */
function setShare(words: Uint32Array): number {
  let set = 0;
  for (let i = 0; i < words.length; i++) {
    let v = words[i] - ((words[i] >>> 1) & 0x55555555);
    v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
    set += (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) as number;
  }
  return set / (words.length * 32);
}

/** blockFilters builds a block's filters, one per stripe of STRIPE entries. */
export function blockFilters(entries: readonly Omit<Entry, "id">[]): Uint32Array[] {
  const out: Uint32Array[] = [];
  for (let i = 0; i < entries.length; i += STRIPE) out.push(blockFilter(entries.length <= STRIPE ? entries : entries.slice(i, i + STRIPE)));
  return out;
}

/** blockFilter builds the filter of some entries (a stripe). */
export function blockFilter(entries: readonly Omit<Entry, "id">[]): Uint32Array {
  let most = 0;
  const actions = new Set<string>();
  for (const e of entries) {
    most += 2 * (e.message?.length ?? 0) + 16; // trigrams, hex grams and words, and room for a few leaves
    actions.add(e.action);
  }
  for (const a of actions) most += 2 * a.length;
  const b = new FilterBuilder(most);
  for (const a of actions) b.addText(a, "action");
  const [actor, target, context, metadata] = FACETS.map(facetHash);
  for (const e of entries) {
    if (e.message !== null) b.addText(e.message, "message");
    if (e.actor !== null) b.addLeaves(actor, e.actor);
    if (e.target !== null) b.addLeaves(target, e.target);
    if (e.context !== null) b.addLeaves(context, e.context);
    if (e.metadata !== null) b.addLeaves(metadata, e.metadata);
  }
  return b.done();
}

/**
 * regionOf is the region of a filter of `regions` regions that a term of hash h falls in: h mod regions. For three
 * times a power of two it is worked out in int32 arithmetic (a hash of 2^31 and over is a double, whose % is slow):
 * (h div low mod 3)·low + h mod low, and x mod 3 = (x's high 16 bits + its low 16 bits) mod 3, as 2^16 ≡ 1 (mod 3).
 */
export function regionOf(h: number, regions: number): number {
  const low = regions & -regions;
  if (low === regions) return h & (regions - 1);
  const q = h >>> (31 - Math.clz32(low));
  return (((q >>> 16) + (q & 0xffff)) % 3) * low + (h & (low - 1));
}

/** regionsOf is how many regions a filter of `words` words has. */
export const regionsOf = (words: Uint32Array): number => words.length / REGION_WORDS;

function setBits(words: Uint32Array, base: number, h: number, k: number): void {
  const b = (h << 15) | (h >>> 17) | 1; // the step between bits: h rotated, odd
  let x = h;
  for (let i = 0; i < k; i++) {
    const bit = x >>> 23; // 9 bits: a position within the region
    words[base + (bit >>> 5)] |= 1 << (bit & 31);
    x = (x + b) >>> 0;
  }
}

/** Probe is a term with the words and bits its k bits fall on within a region, which depend on its hash alone. */
export interface Probe {
  h: number;
  at: Int32Array;
  bits: Int32Array;
}

/** Probes are a needle's terms worked out by probeOf: what a query tests every stripe with. */
export type Probes = readonly (readonly Probe[])[];

/** probeOf works out a term's bits once (the ones setBits sets), for testing it against many regions (probeHolds). */
export function probeOf({ h, k }: FilterTerm): Probe {
  const at = new Int32Array(k);
  const bits = new Int32Array(k);
  const b = (h << 15) | (h >>> 17) | 1; // as setBits steps
  let x = h;
  for (let i = 0; i < k; i++) {
    const bit = x >>> 23;
    at[i] = bit >>> 5;
    bits[i] = 1 << (bit & 31);
    x = (x + b) >>> 0;
  }
  return { h, at, bits };
}

/** probesOf works out every term of a needle once. */
export const probesOf = (needle: Needle): Probes => needle.map((terms) => terms.map(probeOf));

/** probeHolds tests one term against the region at word `base` of `words`. */
export function probeHolds(words: Uint32Array, base: number, { at, bits }: Probe): boolean {
  for (let i = 0; i < at.length; i++) if ((words[base + at[i]] & bits[i]) === 0) return false;
  return true;
}

/** probesHold tests a needle's probes against a whole filter (one stripe's). */
export function probesHold(words: Uint32Array, probes: Probes): boolean {
  const regions = regionsOf(words);
  return probes.some((terms) => terms.every((p) => probeHolds(words, regionOf(p.h, regions) * REGION_WORDS, p)));
}

/** filterMayHold tests a needle against a whole filter (one stripe's). */
export const filterMayHold = (words: Uint32Array, needle: Needle): boolean => probesHold(words, probesOf(needle));

const lowerAscii = (c: number): number => (c >= 0x41 && c <= 0x5a ? c | 0x20 : c);

function pow2AtLeast(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}
