// compile: turns a query into one predicate for the executor, with each value prepared once
// (lowercased, split into words, glob parts) instead of once per entry. It must accept exactly
// what the reference matcher (match.ts) accepts; the exactness property test holds it to that.
import type { Environment } from "../schema.ts";
import { storedObjectsText, type Block } from "../storage/format/block.ts";
import type { Row } from "../storage/entries.ts";
import type { Query, Term } from "./ast.ts";
import { glob, hasAllWords, matchTerm } from "./match.ts";
import { isAscii, words } from "../words.ts";

type Test = (row: Row) => boolean;
type TextTest = (text: string | null) => boolean;

/** compileQuery returns the predicate of a whole query (all terms ANDed). */
export function compileQuery(q: Query, env: Environment): Test {
  const tests = q.terms.map((t) => compileTerm(t, env));
  return (row) => {
    for (const test of tests) if (!test(row)) return false;
    return true;
  };
}

/**
 * compileBlockTest returns what narrows a block to the entries that may match (ascending positions; undefined: all
 * of them), read off the stored bytes without decoding an entry, or undefined when the query has nothing to narrow by.
 * Each term that can narrows on its own, and an entry must pass them all:
 *   - a message `~`, `=`, literal, `@` or free words: the message, lowercased, must hold some value's needles: each
 *     of its lowercase ASCII pieces of 3 or more (a `~` part, a word), found with ASCII letters folded, every entry
 *     with a character beyond ASCII kept; else its longest run of ASCII digits, spaces and punctuation, found as it
 *     is (lowercasing turns no other character into one of these). Free words may instead all be in the action.
 *   - a `path=`: one of its values, as JSON writes it inside a string, must be in the objects' JSON text: a string
 *     field equal to it is stored that way between quotes, and a number or boolean whose text form it is, as itself.
 *   - a term on the level or the action: the term itself, on each of the block's distinct values; a `tag=`: a tag
 *     among its values.
 */
export function compileBlockTest(q: Query, env: Environment): BlockTest | undefined {
  const narrows = q.terms.map((t) => narrowing(t) ?? byDictionary(t, env)).filter((n): n is BlockTest => n !== undefined);
  if (narrows.length === 0) return undefined;
  return (block) => {
    let at: readonly number[] | undefined; // an entry must be named by every term that narrows
    for (const narrow of narrows) {
      const found = narrow(block);
      if (found === undefined) continue; // an older block: any entry may
      at = at === undefined ? found : intersect(at, found);
    }
    return at;
  };
}

/** BlockTest narrows a block to the ascending positions of the entries that may match; undefined: every entry may. */
export type BlockTest = (block: Block) => readonly number[] | undefined;

/** Needle is what one value of a term needs in a block's bytes: found as it is, or with ASCII letters folded. */
interface Needle {
  bytes: Uint8Array;
  folded: boolean;
}

// what a term narrows a block to, or undefined when it cannot narrow
function narrowing(t: Term): BlockTest | undefined {
  if (t.kind === "path" && t.op === "=" && t.values.every((v) => v.kind === "string")) {
    const needles = t.values.map((v) => Buffer.from(JSON.stringify(v.kind === "string" ? v.text : "").slice(1, -1)));
    return (block) => union(needles.map((n) => block.objectsWith(n)));
  }
  if (t.kind === "free") {
    const inMessage = messageNeedle([t.words]);
    if (!inMessage) return undefined;
    const actionHolds = new Map<string, boolean>(); // blocks share their actions: each is split into words once
    const holdsAll = (action: string) => {
      let holds = actionHolds.get(action);
      if (holds === undefined) actionHolds.set(action, (holds = hasAllWords(t.words, action)));
      return holds;
    };
    return (block) => {
      const found = inMessage(block);
      const actions = block.codes("action");
      if (found === undefined || actions === undefined) return undefined;
      const holds = actions.values.map(holdsAll); // or all in the action
      if (!holds.includes(true)) return found;
      const also: number[] = [];
      for (let i = 0; i < block.size; i++) if (holds[actions.codes[i]]) also.push(i);
      return union([found, also]);
    };
  }
  if (t.kind === "literal" && t.facet === "message") return messageNeedle([[t.text]]);
  if (t.kind !== "text" || t.facet !== "message" || !t.values.every((v) => v.kind === "string")) return undefined;
  const strings = t.values.map((v) => (v.kind === "string" ? v.text : ""));
  if (t.op === "~") return messageNeedle(strings.map((s) => s.split("*")));
  if (t.op === "=") return messageNeedle(strings.map((s) => [s]));
  if (t.op === "@") return messageNeedle(strings.map(words));
  return undefined;
}

// a term on the level, the action or tags narrows by the block's dictionary of them: each distinct value is tested once
function byDictionary(t: Term, env: Environment): BlockTest | undefined {
  const column =
    t.kind === "enum" && t.facet === "level" ? "level" : (t.kind === "text" || t.kind === "literal") && t.facet === "action" ? "action" : undefined;
  if (column) {
    const test = compileTerm(t, env); // reads the entry's level or action alone
    const probe = { serverMs: 0, entry: { level: "", action: "" } };
    return (block) => {
      const dict = block.codes(column);
      if (!dict) return undefined;
      const pass = dict.values.map((v) => {
        probe.entry[column] = v;
        return test(probe as unknown as Row);
      });
      if (!pass.includes(false)) return undefined;
      const at: number[] = [];
      for (let i = 0; i < block.size; i++) if (pass[dict.codes[i]]) at.push(i);
      return at;
    };
  }
  if (t.kind !== "tag" || t.op !== "=" || !t.values.every((v) => v.kind === "string")) return undefined;
  const wanted = new Set(t.values.map((v) => (v.kind === "string" ? v.text : "")));
  return (block) => {
    const dict = block.tagCodes();
    if (!dict) return undefined;
    const hit = dict.values.map((v) => wanted.has(v));
    const at: number[] = [];
    if (!hit.includes(true)) return at;
    for (let i = 0; i < block.size; i++) {
      for (let k = dict.starts[i]; k < dict.starts[i + 1]; k++) {
        if (!hit[dict.codes[k]]) continue;
        at.push(i);
        break;
      }
    }
    return at;
  };
}

// narrows by messages: a matching message (lowercased) holds every part of some alternative, so all its needles
function messageNeedle(alternatives: string[][]): BlockTest | undefined {
  const needles = alternatives.map(needlesOf);
  if (!needles.every((n) => n.length > 0)) return undefined;
  const found = (block: Block, n: Needle) => (n.folded ? block.messagesFolding(n.bytes) : block.messagesWith(n.bytes));
  return (block) =>
    union(
      needles.map((all) => {
        let at = found(block, all[0]);
        for (let k = 1; k < all.length && at !== undefined && at.length > 0; k++) {
          const next = found(block, all[k]);
          at = next === undefined ? undefined : intersect(at, next);
        }
        return at;
      }),
    );
}

// the needles of parts that all appear in a matching text lowercased: each lowercase ASCII part, else the longest non-letter run
function needlesOf(parts: string[]): Needle[] {
  const ascii = parts.map(lower).filter((p) => p.length >= MIN_RUN && isAscii(p));
  if (ascii.length > 0) return [...new Set(ascii)].sort((a, b) => b.length - a.length).map((p) => ({ bytes: Buffer.from(p), folded: true }));
  const run = longest(parts.flatMap((part) => part.match(ASCII_NOT_LETTERS) ?? []));
  return run.length >= MIN_RUN ? [{ bytes: Buffer.from(run), folded: false }] : [];
}

// the union of ascending position lists; undefined when any is (an older block: any entry may)
function union(lists: (readonly number[] | undefined)[]): readonly number[] | undefined {
  if (lists.some((l) => l === undefined)) return undefined;
  return lists.length === 1 ? lists[0] : [...new Set(lists.flat() as number[])].sort((a, b) => a - b);
}

function intersect(a: readonly number[], b: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    if (a[i] === b[j]) {
      out.push(a[i]);
      i++;
      j++;
    } else if (a[i] < b[j]) i++;
    else j++;
  }
  return out;
}

const MIN_RUN = 3; // shorter runs (" 1", ": ") are in nearly every block: not worth the search
// biome-ignore lint/suspicious/noControlCharactersInRegex: every ASCII character but letters, control characters included
const ASCII_NOT_LETTERS = /[\x00-\x40\x5b-\x60\x7b-\x7f]+/g;
const longest = (xs: string[]): string => xs.reduce((a, b) => (b.length > a.length ? b : a), "");

function compileTerm(t: Term, env: Environment): Test {
  switch (t.kind) {
    case "text": {
      const get = t.facet === "action" ? (r: Row) => r.entry.action : (r: Row) => r.entry.message;
      const strings = t.values.flatMap((v) => (v.kind === "string" ? [v.text] : []));
      if (t.op === "@") {
        const alternatives = strings.map((s) => wordsTest(words(s)));
        return (r) => alternatives.some((test) => test(get(r)));
      }
      if (t.op === "~" || t.op === "!~") {
        const patterns = strings.map(containsTest);
        const negate = t.op === "!~";
        return (r) => {
          const text = get(r);
          return negate !== (text !== null && patterns.some((p) => p(text)));
        };
      }
      const wanted = new Set(strings.map(lower));
      const orNull = t.values.some((v) => v.kind === "null");
      const negate = t.op === "!=";
      return (r) => {
        const text = get(r);
        return negate !== (text === null ? orNull : wanted.has(lower(text)));
      };
    }
    case "path": {
      if (t.op !== "=" || !t.values.every((v) => v.kind === "string")) return (r) => matchTerm(t, r, env);
      // a field equal to a value holds it in the stored JSON text, as JSON writes it inside a string: look before parsing
      const needles = t.values.map((v) => JSON.stringify(v.kind === "string" ? v.text : "").slice(1, -1));
      return (r) => {
        const raw = storedObjectsText(r.entry);
        if (raw === null || (raw !== undefined && !needles.some((n) => raw.includes(n)))) return false;
        return matchTerm(t, r, env);
      };
    }
    case "free": {
      const test = wordsTest(t.words);
      return (r) => test(r.entry.action) || test(r.entry.message);
    }
    case "literal": {
      const needle = lower(t.text);
      const get = t.facet === "action" ? (r: Row) => r.entry.action : (r: Row) => r.entry.message;
      return (r) => {
        const text = get(r);
        return text !== null && lower(text).includes(needle);
      };
    }
    default:
      return (r) => matchTerm(t, r, env);
  }
}

/** containsTest is `~` for one value, its pattern lowercased and split once. */
function containsTest(pattern: string): (text: string) => boolean {
  const p = lower(pattern);
  if (!p.includes("*")) return (text) => lower(text).includes(p);
  const parts = p.split("*");
  return (text) => glob(lower(text), parts);
}

/**
 * wordsTest is full-text matching for one set of words. A word of the text is a substring of the
 * lowercased text, so a cheap substring check rules most texts out before words are split; words
 * with a sigma are left to the full check, as only sigma lowercases differently in context.
 */
function wordsTest(need: string[]): TextTest {
  if (need.length === 0) return () => true;
  const quick = need.filter((w) => !w.includes("σ") && !w.includes("ς"));
  return (text) => {
    if (text === null) return false;
    const lt = lower(text);
    for (const w of quick) if (!lt.includes(w)) return false;
    return isAscii(text) ? need.every((w) => hasAsciiWord(lt, w)) : hasAllWords(need, text);
  };
}

/**
 * hasAsciiWord tells whether w is a full-text word of an ASCII text, given lowercased: its words are then the maximal
 * runs of [a-z0-9], so w must occur with no letter or digit on either side (words() gives the same, splitting it all).
 */
function hasAsciiWord(lowered: string, w: string): boolean {
  for (let at = lowered.indexOf(w); at >= 0; at = lowered.indexOf(w, at + 1)) {
    if (!isWordCode(lowered.charCodeAt(at - 1)) && !isWordCode(lowered.charCodeAt(at + w.length))) return true;
  }
  return false;
}

// a lowercase ASCII letter or digit (NaN, past either end, is neither)
const isWordCode = (c: number): boolean => (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39);

const lower = (s: string): string => s.toLowerCase();
