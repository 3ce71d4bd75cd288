// plan: estimates each conjunct an index can answer, and picks the cheapest way to find candidates.
// Every index only proposes candidate entries; the executor checks the whole query on each one,
// so the result never depends on the plan chosen.
import type { EntryStore } from "../storage/entries.ts";
import type { BlockRef, ScanRange, Tenant } from "../storage/keys.ts";
import { pathTerm, substringTerms, wordTerms, type FilterTerm, type Needle } from "../storage/indexes/needles.ts";
import type { PostingKind } from "../storage/indexes/posting-terms.ts";
import { lowerBoundMs, upperBoundMs } from "../time.ts";
import type { Query, Term, TextTerm } from "./ast.ts";
import { formatTerm } from "./format.ts";
import { contains, hasAllWords } from "./match.ts";
import { filtersHoldWords, jointNeedle } from "./joint.ts";
import { mergeRefs } from "./merge.ts";
import { words } from "../words.ts";

/** Candidate is one way to find the entries that may match, with its cost in blocks to read. */
export interface Candidate {
  index: "range" | "id" | "level" | "tag" | "action" | "fulltext" | "value" | "substring" | "filters" | "none";
  /** the conjunct it answers, canonically printed; absent for the range scan */
  term?: string;
  /** blocks to read, counted up to the best estimate found before it (then it is "at least this") */
  estimate: number;
  open(): Iterable<BlockRef>;
}

type Proposal = Omit<Candidate, "term" | "estimate"> & {
  estimate(cap: number): number;
  /** shown by explain but never chosen: the plan explain shows is the one a read runs */
  explainOnly?: boolean;
  /** for a count stopped at its cap: the millisecond of the last block counted (a sparser source reaches further back) */
  reach?: number;
};

export interface QueryPlan {
  range: ScanRange;
  chosen: Candidate;
  candidates: Candidate[];
}

// Estimates count blocks only up to this: the choice needs "rare or not", and every key counted costs time.
const COUNT_CAP = 250;
// ...and a filter that only the range scan competes with, this far: it names a subset of the range's blocks, so the
// count only has to tell whether it skips some (the reach of two counts stopped at the cap tells), and a count that
// does not stop scans the filters of the whole range
const FILTER_ALONE_CAP = 32;

/** planQuery narrows the range by the server_timestamp terms and picks the cheapest candidate source. */
export function planQuery(store: EntryStore, tenant: Tenant, query: Query, requested: ScanRange, explaining = false): QueryPlan {
  const range = narrow(requested, query.terms);
  const proposals: [Proposal, string | undefined][] = [];
  const needles = query.terms.flatMap((term) => {
    const n = needleOf(term);
    return n ? [{ term, needle: n.needle }] : [];
  });
  // the terms' filters together first: a subset of each one's blocks, so counting it first caps the counts after it
  const joint = jointNeedle(needles);
  if (joint) proposals.push([filterCandidate(store, tenant, "filters", joint.needle, range), joint.terms.map(formatTerm).join(" ")]);
  for (const term of query.terms) {
    for (const p of candidatesFor(store, tenant, term, range, explaining, joint?.terms.includes(term) ?? false)) proposals.push([p, formatTerm(term)]);
  }
  // the range scan last: it only has to be counted as far as the best index's estimate, and not at all alone
  const alone = proposals.length === 0 && !explaining; // explain still counts, so that it can show the figure
  const competing = proposals.filter(([p]) => !p.explainOnly);
  const filterAlone = competing.length === 1 && isFilterIndex(competing[0][0].index);
  proposals.push([rangeProposal(store, tenant, range, alone), undefined]);
  let best = filterAlone ? FILTER_ALONE_CAP : COUNT_CAP;
  const counted = proposals.map(([p, term]) => {
    const estimate = p.estimate(best + 1);
    if (!p.explainOnly) best = Math.min(best, estimate); // explain must count the chosen plan's candidates as a read does
    return { candidate: { index: p.index, term, estimate, open: p.open } as Candidate, reach: p.reach, explainOnly: p.explainOnly };
  });
  const chosen = counted.filter((c) => !c.explainOnly).reduce((b, c) => (better(c, b) ? c : b)).candidate;
  const candidates = counted.map((c) => c.candidate);
  return { range, chosen, candidates: [candidates[candidates.length - 1], ...candidates.slice(0, -1)] };
}

const isFilterIndex = (index: Candidate["index"]) => index === "value" || index === "substring" || index === "filters";
const isFilter = (c: Candidate) => isFilterIndex(c.index);

/**
 * better tells whether a counted candidate beats another: fewer blocks; at a tie of two counts stopped at the cap
 * between a filter and the range scan, the one that reached further back in time, being sparser; else the range
 * scan over a filter, reading the same blocks without testing filters first.
 */
function better(c: { candidate: Candidate; reach?: number }, b: { candidate: Candidate; reach?: number }): boolean {
  if (c.candidate.estimate !== b.candidate.estimate) return c.candidate.estimate < b.candidate.estimate;
  const pair = (isFilter(c.candidate) && b.candidate.index === "range") || (c.candidate.index === "range" && isFilter(b.candidate));
  if (pair && c.reach !== undefined && b.reach !== undefined && c.reach !== b.reach) return c.reach < b.reach;
  return c.candidate.index === "range" && isFilter(b.candidate);
}

/** rangeProposal is the full scan of the range, its blocks counted only when other candidates need comparing. */
function rangeProposal(store: EntryStore, tenant: Tenant, range: ScanRange, alone: boolean): Proposal {
  const p: Proposal = {
    index: "range",
    estimate: (cap) => {
      if (alone) return 0;
      const { n, reach } = store.countBlocks(tenant, range, cap);
      p.reach = reach;
      return n;
    },
    open: () => store.blocks(tenant, range),
  };
  return p;
}

function candidatesFor(store: EntryStore, tenant: Tenant, term: Term, range: ScanRange, explaining: boolean, inJoint: boolean): Proposal[] {
  const needle = needleOf(term);
  // full text asks another thread; filters that hold the term's words name no more blocks but for their false
  // positives: then it is counted only for explain, and not chosen there either
  const skipFullText = needle !== undefined && filtersHoldWords(term);
  const byIndex = skipFullText && !explaining ? undefined : candidateFor(store, tenant, term, range);
  if (byIndex && skipFullText) byIndex.explainOnly = true;
  // an action's postings name exactly its blocks, and its filter a superset of them: never cheaper, so counted only for
  // explain; nor is the filter of a term whose joint filter (a subset) is counted
  const byFilter = needle && (explaining || (byIndex?.index !== "action" && !inJoint)) && filterCandidate(store, tenant, needle.index, needle.needle, range);
  if (byFilter && inJoint) byFilter.explainOnly = true; // explain's plan is the read's
  return [byIndex, byFilter || undefined].filter((p): p is Proposal => p !== undefined);
}

/** filterCandidate proposes the blocks whose filter may hold a needle; a count that finished keeps its blocks for open(). */
function filterCandidate(store: EntryStore, tenant: Tenant, index: "value" | "substring" | "filters", needle: Needle, range: ScanRange): Proposal {
  let found: BlockRef[] | undefined;
  const p: Proposal = {
    index,
    estimate: (cap) => {
      const refs: BlockRef[] = [];
      let blocks = 0; // a block's stripes come one after another: count the block once
      for (const ref of store.needleBlocks(tenant, needle, range)) {
        const last = refs[refs.length - 1];
        if (!last || last.ms !== ref.ms || last.firstId !== ref.firstId) blocks++;
        if (blocks >= cap) {
          p.reach = ref.ms;
          return cap;
        }
        refs.push(ref);
      }
      found = refs;
      return blocks;
    },
    open: () => found ?? store.needleBlocks(tenant, needle, range),
  };
  return p;
}

/**
 * needleOf is what a block's filter must hold for a block to have an entry matching the term, when the filter can tell:
 * a path's text form for `path=`; the trigrams of what `~`, `=` or a literal find in a message or action; the words of `@` and free words.
 */
export function needleOf(term: Term): { index: "value" | "substring"; needle: Needle } | undefined {
  const strings = (values: readonly { kind: string; text?: string }[]) =>
    values.every((v) => v.kind === "string") ? values.map((v) => v.text as string) : undefined;
  const substrings = (domain: "message" | "action", alternatives: string[][]) => {
    // every part is a substring of the lowercased text; a part shorter than 3 units adds nothing
    const needle = alternatives.map((parts) => parts.flatMap((part) => substringTerms(part.toLowerCase(), domain)));
    return needle.every((terms) => terms.length > 0) ? { index: "substring" as const, needle } : undefined;
  };
  // an alternative without terms (its words all short) may be in any block: then the filter cannot narrow
  const byWords = (needle: FilterTerm[][]) => (needle.every((terms) => terms.length > 0) ? { index: "substring" as const, needle } : undefined);
  switch (term.kind) {
    case "path": {
      const texts = term.op === "=" ? strings(term.values) : undefined;
      return texts && { index: "value", needle: texts.map((t) => [pathTerm(term.facet, term.path, t)]) };
    }
    case "literal":
      return substrings(term.facet, [[term.text]]);
    case "free":
      return byWords([wordTerms(term.words, "message"), wordTerms(term.words, "action")]); // all in the message, or all in the action
    case "text": {
      const texts = strings(term.values);
      if (!texts) return undefined;
      if (term.op === "~")
        return substrings(
          term.facet,
          texts.map((t) => t.split("*")),
        );
      if (term.op === "=")
        return substrings(
          term.facet,
          texts.map((t) => [t]),
        );
      if (term.op === "@") {
        const facet = term.facet;
        return byWords(texts.map((t) => wordTerms(words(t), facet)));
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

function candidateFor(store: EntryStore, tenant: Tenant, term: Term, range: ScanRange): Proposal | undefined {
  const postings = (kind: PostingKind, index: Candidate["index"], terms: string[]): Proposal => ({
    index,
    estimate: (cap) => terms.reduce((n, t) => (n >= cap ? n : n + store.countPostingBlocks(tenant, kind, t, range, cap - n)), 0),
    open: () => mergeRefs(terms.map((t) => store.postingBlocks(tenant, kind, t, range))),
  });
  const fulltext = (alternatives: string[][]): Proposal => ({
    index: "fulltext",
    estimate: () => alternatives.reduce((n, w) => n + store.estimateTextBlocks(tenant, w), 0),
    open: () => mergeRefs(alternatives.map((w) => store.textBlocks(tenant, w, range))),
  });
  const actions = (literal: string, test: (a: string) => boolean) => postings("a", "action", store.actions(tenant, literal, test));
  const fixed = (index: Candidate["index"], n: number, open: () => Iterable<BlockRef>): Proposal => ({ index, estimate: () => n, open });

  switch (term.kind) {
    case "id":
      if (term.op !== "=") return undefined;
      return fixed("id", term.values.length, () =>
        term.values
          .map((v) => store.locate(tenant, v.text))
          .filter((r): r is BlockRef => r !== undefined)
          .sort((a, b) => b.ms - a.ms || (a.firstId < b.firstId ? 1 : -1)),
      );
    case "enum":
      if (term.op !== "=") return undefined;
      if (term.facet === "environment") {
        return term.values.some((v) => v.text === tenant.env) ? undefined : fixed("none", 0, () => []);
      }
      return postings(
        "l",
        "level",
        term.values.map((v) => v.text),
      );
    case "tag":
      if (term.op !== "=" || term.values.some((v) => v.kind === "null")) return undefined;
      return postings(
        "t",
        "tag",
        term.values.map((v) => (v.kind === "string" ? v.text : "")),
      );
    case "literal":
      return term.facet === "action" ? actions(term.text.toLowerCase(), (a) => a.toLowerCase().includes(term.text.toLowerCase())) : undefined;
    case "free":
      return term.words.length > 0 ? fulltext([term.words]) : undefined;
    case "text":
      return textCandidate(term, actions, fulltext);
    default:
      return undefined;
  }
}

function textCandidate(
  term: TextTerm,
  actions: (literal: string, test: (a: string) => boolean) => Proposal,
  fulltext: (alternatives: string[][]) => Proposal,
): Proposal | undefined {
  if (term.values.some((v) => v.kind === "null")) return undefined;
  const texts = term.values.map((v) => (v.kind === "string" ? v.text : ""));
  if (term.facet === "action") {
    // the dictionary of distinct actions answers =, ~ and @ exactly; postings then find the entries
    const lowered = texts.map((t) => t.toLowerCase());
    switch (term.op) {
      case "=":
        return actions(lowered.length === 1 ? lowered[0] : "", (a) => lowered.includes(a.toLowerCase()));
      case "~":
        return actions(lowered.length === 1 ? longestFragment(lowered[0]) : "", (a) => texts.some((t) => contains(a, t)));
      case "@": {
        const need = texts.map(words);
        return actions("", (a) => need.some((w) => hasAllWords(w, a)));
      }
      default:
        return undefined;
    }
  }
  if (term.op === "=" || term.op === "@") {
    const alternatives = texts.map(words);
    // a value without words is matched by a message without words, which no full-text document holds
    return alternatives.every((w) => w.length > 0) ? fulltext(alternatives) : undefined;
  }
  return undefined;
}

/** longestFragment is the longest part of a glob between `*`s: every match contains it. */
function longestFragment(pattern: string): string {
  return pattern.split("*").reduce((a, b) => (b.length > a.length ? b : a), "");
}

/** narrow intersects the range with what the server_timestamp terms allow (a superset: terms are rechecked). */
function narrow(range: ScanRange, terms: Term[]): ScanRange {
  let { fromMs, toMs } = range;
  for (const t of terms) {
    if (t.kind !== "time" || t.facet !== "server_timestamp" || t.op === "!=") continue;
    let lo = Infinity;
    let hi = -Infinity;
    for (const { instant } of t.values) {
      const [l, h] =
        t.op === ">"
          ? [instant.ms + 1, Infinity]
          : t.op === ">="
            ? [lowerBoundMs(instant), Infinity]
            : t.op === "<"
              ? [-Infinity, upperBoundMs(instant)]
              : t.op === "<="
                ? [-Infinity, instant.ms + 1]
                : [instant.ms, instant.ms + 1];
      lo = Math.min(lo, l);
      hi = Math.max(hi, h);
    }
    fromMs = Math.max(fromMs, lo);
    toMs = Math.min(toMs, hi);
  }
  return { ...range, fromMs, toMs };
}
