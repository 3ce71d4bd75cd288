// encode: a block's stored parts made from its entries, on any thread (bulk bodies are prepared on an ingest
// worker): its columns but the ids, its postings, its distinct actions, its full-text document and its filter.
import type { Entry } from "./block.ts";
import { blockWords, encodeSized, type Columns } from "./block-encode.ts";
import { documentTerms, type DocumentText } from "../indexes/fulltext-encoder.ts";
import { clientBoundsOf, type ClientBounds } from "../indexes/bounds.ts";
import { blockFilters } from "../indexes/needles.ts";
import { blockTerms, type BlockTerms } from "../indexes/posting-terms.ts";

/** EncodedBlock is one block of entries encoded all but its ids, which only the main thread draws (they ascend across the process). */
export interface EncodedBlock {
  size: number;
  columns: Columns;
  /** postings: kind, term and the encoded positions of the entries that carry it */
  terms: BlockTerms;
  /** distinct actions, for the dictionary */
  actions: string[];
  /** the full-text document (blockWords), its words split already when encoded off the main thread */
  text: DocumentText;
  /** the filters of its rare values, one per stripe (needles.ts) */
  filters: Uint32Array[];
  /** its entries' raw JSON in bytes, without the environment's name (raw-size.ts); absent in a cluster write from before it was sent */
  raw?: number;
  /** its entries' smallest and largest clientMs (bounds.ts); absent in a cluster write from before it was sent */
  clientBounds?: ClientBounds;
}

/**
 * encodeEntries encodes at most BLOCK_MAX entries, in id order, as one block. `splitWords` splits the full-text
 * words here rather than in the full-text worker: a cluster front's block is applied by several copies, while one
 * process's full-text worker splits them beside the ingest.
 */
export function encodeEntries(entries: readonly Omit<Entry, "id">[], splitWords = false): EncodedBlock {
  const { columns, raw } = encodeSized(entries);
  return {
    size: entries.length,
    columns,
    raw,
    clientBounds: clientBoundsOf(entries.length, (i) => entries[i].clientMs),
    terms: blockTerms(entries),
    actions: [...new Set(entries.map((e) => e.action))],
    text: splitWords ? documentTerms(blockWords(entries)) : blockWords(entries),
    filters: blockFilters(entries),
  };
}
