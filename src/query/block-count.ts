// block-count: the entries of one block a query matches, and their groups, by the checks a full scan makes (the
// block's dictionaries narrow, the compiled query decides). Every plan of hits' engine finds what the full scan
// finds, so counts made block by block as blocks commit add up to what POST /logs/hits counts. A block whose
// entries are at hand (a write's own, which the block stores exactly) is checked on them, without decoding it.
import type { Environment } from "../schema.ts";
import { type Block, type Entry, EntryView } from "../storage/format/block.ts";
import type { Query } from "./ast.ts";
import { compileBlockTest, compileQuery } from "./compile.ts";
import { countBlockGroups, entryGroupReader, groupReader, type GroupField } from "./group-field.ts";

/** Committed is a block as committed: decoded lazily, or its entries as written. */
export type Committed = Block | readonly Entry[];

const sizeOf = (c: Committed) => (Array.isArray(c) ? c.length : (c as Block).size);

/** BlockMatcher gives the ascending positions of a block's entries that match (null: every one); `serverMs` is where the block is stored. */
export type BlockMatcher = (block: Committed, serverMs: number) => readonly number[] | null;

/** blockMatcher prepares `query`'s test of one block at a time. */
export function blockMatcher(query: Query, env: Environment): BlockMatcher {
  if (query.terms.length === 0) return () => null;
  const accept = compileQuery(query, env);
  const mayHold = compileBlockTest(query, env);
  const view = new EntryView(undefined as unknown as Block, 0);
  const probe: { serverMs: number; entry: Entry } = { serverMs: 0, entry: view };
  return (block, serverMs) => {
    const out: number[] = [];
    probe.serverMs = serverMs;
    if (Array.isArray(block)) {
      for (let i = 0; i < block.length; i++) {
        probe.entry = block[i];
        if (accept(probe)) out.push(i);
      }
      return out;
    }
    const at = mayHold?.(block as Block);
    probe.entry = view;
    view.b = block as Block;
    for (let k = 0, n = at ? at.length : sizeOf(block); k < n; k++) {
      view.i = at ? at[k] : k;
      if (accept(probe)) out.push(view.i);
    }
    return out;
  };
}

/** GroupCounter hands `add` the groups (null: the null group) of a block's entries at `at` (null: all), with their counts, as hits groups them. */
export type GroupCounter = (block: Committed, at: readonly number[] | null, add: (text: string | null, n: number) => void) => void;

/** groupCounter prepares the counting of `field`'s groups in one block at a time. */
export function groupCounter(field: GroupField, env: Environment): GroupCounter {
  const read = groupReader(field, env);
  const readEntry = entryGroupReader(field, env);
  return (block, at, add) => {
    const n = at ? at.length : sizeOf(block);
    const entries = Array.isArray(block) ? (block as readonly Entry[]) : undefined;
    // a few entries are read one by one: the column-wise count's arrays cost more than they save
    if (!entries && n > 4 && countBlockGroups(field, env, block as Block, at, add)) return;
    for (let k = 0; k < n; k++) {
      const i = at ? at[k] : k;
      const values = entries ? readEntry(entries[i]) : read(block as Block, i);
      if (values.length === 0) add(null, 1);
      else for (const v of values) add(v, 1);
    }
  };
}
