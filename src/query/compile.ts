// compile: turns a query into one predicate for the executor, with each value prepared once
// (lowercased, split into words, glob parts) instead of once per entry. It must accept exactly
// what the reference matcher (match.ts) accepts; the exactness property test holds it to that.
import type { Environment } from "../schema.ts";
import { EntryView, type Block } from "../storage/block.ts";
import type { Row } from "../storage/entries.ts";
import type { Query, Term } from "./ast.ts";
import { glob, hasAllWords, matchTerm } from "./match.ts";
import { words } from "../words.ts";

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
 * compileBlockTest returns what narrows a block to the entries that may match (ascending positions; undefined:
 * all of them), read off the stored bytes without decoding an entry, or undefined when the query has nothing to narrow by: for a message `~` or contains-filter, one of its values' longest run of ASCII digits, spaces and
 * punctuation (a request id, an address, a code) must be in the block's message bytes. Such a run matches
 * exactly itself under any case: lowercasing turns no other character into one of these. For a `path=`,
 * one of its values, as JSON writes it inside a string, must be in the objects' JSON text: a string field
 * equal to it is stored that way between quotes, and a number or boolean whose text form it is, as itself.
 */
export function compileBlockTest(q: Query): BlockTest | undefined {
  const groups: Uint8Array[][] = []; // a block must hold some needle of every group
  const objectGroups: Uint8Array[][] = [];
  for (const t of q.terms) {
    if (t.kind === "path" && t.op === "=" && t.values.every((v) => v.kind === "string")) {
      objectGroups.push(t.values.map((v) => Buffer.from(JSON.stringify(v.kind === "string" ? v.text : "").slice(1, -1))));
      continue;
    }
    // the parts each value's match holds whole: a literal is one part; a `~` glob's parts between `*`s all appear
    const values =
      t.kind === "literal" && t.facet === "message"
        ? [[t.text]]
        : t.kind === "text" && t.facet === "message" && t.op === "~"
          ? t.values.flatMap((v) => (v.kind === "string" ? [v.text.split("*")] : []))
          : [];
    if (values.length === 0) continue;
    const needles = values.map((parts) => longest(parts.flatMap((part) => part.match(ASCII_NOT_LETTERS) ?? [])));
    if (needles.every((n) => n.length >= MIN_RUN)) groups.push(needles.map((n) => Buffer.from(n)));
  }
  if (groups.length === 0 && objectGroups.length === 0) return undefined;
  return (block) => {
    let at: number[] | undefined; // an entry must be found by some needle of every group
    const narrow = (found: (needle: Uint8Array) => number[] | undefined, needles: Uint8Array[]) => {
      const lists = needles.map(found);
      if (lists.some((l) => l === undefined)) return; // an older block: any entry may
      const union = lists.length === 1 ? lists[0]! : [...new Set(lists.flat() as number[])].sort((a, b) => a - b);
      at = at === undefined ? union : intersect(at, union);
    };
    for (const needles of groups) narrow((n) => block.messagesWith(n), needles);
    for (const needles of objectGroups) narrow((n) => block.objectsWith(n), needles);
    return at;
  };
}

/** BlockTest narrows a block to the ascending positions of the entries that may match; undefined: every entry may. */
export type BlockTest = (block: Block) => readonly number[] | undefined;

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
        const raw = r.entry instanceof EntryView ? r.entry.b.objectsText(r.entry.i) : undefined;
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
    return hasAllWords(need, text);
  };
}

const lower = (s: string): string => s.toLowerCase();
