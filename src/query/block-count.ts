// block-count: the entries of one block a query matches, per group, by the checks a full scan makes (the block's
// dictionaries narrow, the compiled query decides). Every plan of hits' engine finds what the full scan finds, so
// counts made block by block as blocks commit add up to what POST /logs/hits counts.
import type { Environment } from "../schema.ts";
import { type Block, EntryView } from "../storage/format/block.ts";
import type { Query } from "./ast.ts";
import { compileBlockTest, compileQuery } from "./compile.ts";
import { countBlockGroups, groupReader, type GroupField } from "./group-field.ts";

/**
 * BlockCounter counts a block's matches, stored at server millisecond `serverMs`: with a group field, `add` gets each
 * group's text (null: the null group) and count, as hits groups them; it returns the number of matching entries.
 */
export type BlockCounter = (block: Block, serverMs: number, add: (text: string | null, n: number) => void) => number;

/** blockCounter prepares the counting of `query`'s matches per group of `field` (none: no groups) in one block at a time. */
export function blockCounter(query: Query, env: Environment, field: GroupField | undefined): BlockCounter {
  const accept = query.terms.length > 0 ? compileQuery(query, env) : undefined;
  const mayHold = compileBlockTest(query, env);
  const read = field ? groupReader(field, env) : undefined;
  const probe = { serverMs: 0, entry: new EntryView(undefined as unknown as Block, 0) };
  return (block, serverMs, add) => {
    let at: readonly number[] | null = mayHold?.(block) ?? null;
    if (accept) {
      const out: number[] = [];
      probe.serverMs = serverMs;
      probe.entry.b = block;
      for (let k = 0, n = at ? at.length : block.size; k < n; k++) {
        probe.entry.i = at ? at[k] : k;
        if (accept(probe)) out.push(probe.entry.i);
      }
      at = out;
    }
    const n = at ? at.length : block.size;
    if (n === 0 || !field || !read) return n;
    if (countBlockGroups(field, env, block, at, add)) return n;
    for (let k = 0; k < n; k++) {
      const values = read(block, at ? at[k] : k);
      if (values.length === 0) add(null, 1);
      else for (const v of values) add(v, 1);
    }
    return n;
  };
}
