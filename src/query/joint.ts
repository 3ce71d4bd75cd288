// joint: one filter needle for several terms together. An entry that matches every term holds each term's needle in
// the filter of its own stripe, so a stripe must hold all of them at once: some alternative of each term's needle.
import { heldAsWords, type FilterTerm, type Needle } from "../storage/indexes/needles.ts";
import type { Term } from "./ast.ts";
import { words } from "../words.ts";

/** Alternatives of a joint needle beyond this (each a product of the terms' own) cost more to test than they save. */
const MAX_ALTERNATIVES = 16;

/** Joint is the needle of several terms at once, and the terms it stands for. */
export interface Joint {
  terms: Term[];
  needle: Needle;
}

/**
 * jointNeedle combines the filter needles of the terms that have one into a single needle that every stripe holding a
 * matching entry holds: each alternative takes one alternative of each term. Undefined when fewer than two terms have
 * a needle, or when the combinations would be too many.
 */
export function jointNeedle(needles: readonly { term: Term; needle: Needle }[]): Joint | undefined {
  if (needles.length < 2) return undefined;
  let alternatives: FilterTerm[][] = [[]];
  for (const { needle } of needles) {
    if (alternatives.length * needle.length > MAX_ALTERNATIVES) return undefined;
    alternatives = alternatives.flatMap((terms) => needle.map((alternative) => [...terms, ...alternative]));
  }
  return { terms: needles.map((n) => n.term), needle: alternatives };
}

/**
 * filtersHoldWords tells whether the filters hold every word a full-text term needs as that word itself (not by its
 * pieces): then they name a subset of the stripes full text would name, up to their false positives, and full text
 * (a search on another thread) need not be asked for an estimate.
 */
export function filtersHoldWords(term: Term): boolean {
  if (term.kind === "free") return heldAsWords(term.words);
  if (term.kind === "text" && term.op === "@" && term.facet === "message") return term.values.every((v) => v.kind === "string" && heldAsWords(words(v.text)));
  return false;
}
