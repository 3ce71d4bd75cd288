// saved-cells: count rules' cells kept across a clean stop, so the first round after a start counts only what is new
// instead of every window whole. Each cell is saved with the signature of the blocks in its range, and a start keeps
// only the cells whose range still holds exactly those blocks: one that might be stale is dropped, never used (§16).
import { pack, unpack } from "msgpackr";
import type { EntryStore } from "../storage/entries.ts";
import type { SavedCells } from "../storage/records/cells.ts";
import type { KeptCell, WindowCounts } from "./window-counts.ts";

/** bumped whenever what a cell holds or how it is counted changes: a record of another version is dropped whole */
const VERSION = 1;

type Row = [
  ws: string,
  env: KeptCell["env"],
  series: string,
  gridMs: number,
  keepMs: number,
  coarse: boolean,
  startMs: number,
  cellMs: number,
  total: number,
  groups: [string | null, number][],
  usedAt: number,
  signature: string,
];

/** saveCells stores every kept cell with the signature of its blocks; call it once evaluations and writes have stopped. */
export async function saveCells(counts: WindowCounts, entries: EntryStore, saved: SavedCells): Promise<number> {
  const signatures = new Signatures(entries);
  const rows: Row[] = [];
  for (const c of counts.keptCells()) {
    const signature = signatures.of(c);
    rows.push([c.ws, c.env, c.series, c.gridMs, c.keepMs, c.coarse, c.startMs, c.cellMs, c.counts.total, [...c.counts.groups], c.usedAt, signature]);
  }
  await saved.save(pack({ version: VERSION, rows }));
  return rows.length;
}

/** loadCells takes the saved record (removing it) and adopts each cell whose blocks are still the ones it counted; it returns how many. */
export function loadCells(counts: WindowCounts, entries: EntryStore, saved: SavedCells): number {
  const bytes = saved.take();
  if (!bytes) return 0;
  const record = unpack(bytes) as { version?: number; rows?: Row[] };
  if (record.version !== VERSION || !Array.isArray(record.rows)) return 0;
  const signatures = new Signatures(entries);
  let adopted = 0;
  for (const [ws, env, series, gridMs, keepMs, coarse, startMs, cellMs, total, groups, usedAt, signature] of record.rows) {
    const cell: KeptCell = { ws, env, series, gridMs, keepMs, coarse, startMs, cellMs, counts: { total, groups: new Map(groups) }, usedAt };
    if (signatures.of(cell) !== signature) continue; // a block was stored or deleted in its range meanwhile
    counts.adopt(cell);
    adopted++;
  }
  return adopted;
}

/** Signatures reads each range's block signature once, however many series have a cell there. */
class Signatures {
  private readonly known = new Map<string, string>();

  constructor(private readonly entries: EntryStore) {}

  of(c: KeptCell): string {
    const name = `${c.ws}\u0000${c.env}\u0000${c.startMs}\u0000${c.cellMs}`;
    let s = this.known.get(name);
    if (s === undefined) this.known.set(name, (s = this.entries.signature(c, c.startMs, c.startMs + c.cellMs)));
    return s;
  }
}
