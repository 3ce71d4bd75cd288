// fulltext-encoder: the terms FlexSearch indexes for a text of words (the worker's distinct words joined by
// spaces, or a query's). It yields exactly the terms of the FlexSearch Encoder that built the sealed segments of
// older data directories (split on spaces, digit runs of three or more cut into triplets, repeats dropped), so
// sealed segments stay searchable, at a fraction of its cost: the Encoder runs three regular expressions
// over the whole text, this one pass over the words that hold digits.

import { addWords } from "../../words.ts";

/**
 * DocumentText is a block's full-text document as the worker takes it: its text (actions and messages; the worker
 * splits the words), or the terms to index, split already where the block was encoded and joined by spaces (a
 * cluster's front splits once for every copy of the block).
 */
export type DocumentText = string | { terms: string };

/** documentTerms splits a document's words and cuts them into the terms the index takes (what the worker would do). */
export function documentTerms(text: string): { terms: string } {
  const words = new Set<string>();
  addWords(text, words);
  return { terms: indexTerms(words).join(" ") }; // a word holds no space
}

/** termsToIndex gives the terms of a document, splitting its words unless that was done. */
export function termsToIndex(doc: DocumentText): string[] {
  if (typeof doc !== "string") return doc.terms === "" ? [] : doc.terms.split(" ");
  const words = new Set<string>();
  addWords(doc, words);
  return indexTerms(words);
}

const ZERO = 0x30;
const NINE = 0x39;
const isDigit = (c: number) => c >= ZERO && c <= NINE;

/**
 * encodeTerms (FlexSearch's `encode` option) splits text on spaces and cuts each word's runs of 3+ ASCII digits
 * into triplets; no repeats. An add hands it the terms already (indexTerms), which pass as they are.
 */
export function encodeTerms(content: string | string[]): string[] {
  if (typeof content !== "string") return content;
  return [...new Set(indexTerms(content.split(" ")))];
}

/**
 * indexTerms gives the terms of words, in order, possibly with repeats (FlexSearch indexes a term once a
 * document): the worker's add skips joining its words into a text only to split them again.
 */
export function indexTerms(words: Iterable<string>): string[] {
  const terms: string[] = [];
  for (const word of words) {
    if (word === "") continue;
    if (word.length < 3 || !/[0-9]{3}/.test(word)) terms.push(word);
    else addCut(word, terms);
  }
  return terms;
}

/** addCut adds a word's pieces: each run of 3+ digits apart, in triplets and a shorter rest; between runs, the rest as it is. */
function addCut(word: string, into: string[]): void {
  let from = 0; // start of the piece not yet added
  let i = 0;
  while (i < word.length) {
    if (!isDigit(word.charCodeAt(i))) {
      i++;
      continue;
    }
    let end = i;
    while (end < word.length && isDigit(word.charCodeAt(end))) end++;
    if (end - i >= 3) {
      if (i > from) into.push(word.slice(from, i));
      for (let t = i; t < end; t += 3) into.push(word.slice(t, Math.min(t + 3, end)));
      from = end;
    }
    i = end;
  }
  if (from < word.length) into.push(word.slice(from));
}
