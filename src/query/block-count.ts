// block-count: the entries of one block a query matches, and their groups, by the checks a full scan makes (the
// block's dictionaries narrow, the compiled query decides). Every plan of hits' engine finds what the full scan
// finds, so counts made block by block as blocks commit add up to what POST /logs/hits counts.
import type { Environment } from "../schema.ts";
import { type Block, EntryView } from "../storage/format/block.ts";
import type { Query } from "./ast.ts";
import { compileBlockTest, compileQuery } from "./compile.ts";
import { countBlockGroups, groupReader, type GroupField } from "./group-field.ts";

/** BlockMatcher gives the ascending positions of a block's entries that match (null: every one); `serverMs` is where the block is stored. */
export type BlockMatcher = (block: Block, serverMs: number) => readonly number[] | null;

/** blockMatcher prepares `query`'s test of one block at a time. */
export function blockMatcher(query: Query, env: Environment): BlockMatcher {
  if (query.terms.length === 0) return () => null;
  const accept = compileQuery(query, env);
  const mayHold = compileBlockTest(query, env);
  const probe = { serverMs: 0, entry: new EntryView(undefined as unknown as Block, 0) };
  return (block, serverMs) => {
    const at = mayHold?.(block);
    const out: number[] = [];
    probe.serverMs = serverMs;
    probe.entry.b = block;
    for (let k = 0, n = at ? at.length : block.size; k < n; k++) {
      probe.entry.i = at ? at[k] : k;
      if (accept(probe)) out.push(probe.entry.i);
    }
    return out;
  };
}

/** GroupCounter hands `add` the groups (null: the null group) of a block's entries at `at` (null: all), with their counts, as hits groups them. */
export type GroupCounter = (block: Block, at: readonly number[] | null, add: (text: string | null, n: number) => void) => void;

/** groupCounter prepares the counting of `field`'s groups in one block at a time. */
export function groupCounter(field: GroupField, env: Environment): GroupCounter {
  const read = groupReader(field, env);
  return (block, at, add) => {
    const n = at ? at.length : block.size;
    // a few entries are read one by one: the column-wise count's arrays cost more than they save
    if (n > 4 && countBlockGroups(field, env, block, at, add)) return;
    for (let k = 0; k < n; k++) {
      const values = read(block, at ? at[k] : k);
      if (values.length === 0) add(null, 1);
      else for (const v of values) add(v, 1);
    }
  };
}
