// compile: turns a query into one predicate for the executor, with each value prepared once
// (lowercased, split into words, glob parts) instead of once per entry. It must accept exactly
// what the reference matcher (match.ts) accepts; the exactness property test holds it to that.
import type { Environment } from "../schema.ts";
import type { Row } from "../storage/entries.ts";
import type { Query, Term } from "./ast.ts";
import { glob, hasAllWords, matchTerm } from "./match.ts";
import { words } from "./words.ts";

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
