// needle-rebuild: every filter built anew from the stored blocks, a layout upgrade (layout.ts).
import type { Database } from "lmdb";
import type { Environment } from "../../schema.ts";
import { packr } from "../format/columns.ts";
import { storedBlock } from "../format/part.ts";
import { blockFilters } from "./needles.ts";
import { SEAL_BLOCKS, SEAL_ENTRIES, bytesOf, pageFit, sealedParts, type FilteredBlock } from "./needle-segment.ts";

/** rebuildFilters drops every filter and builds them anew from the blocks, sealed a segment at a time (a layout upgrade). */
export function rebuildFilters(dbs: { entries: Database; parts: Database; filters: Database; filtersHeld: Database }): number {
  dbs.filters.clearSync();
  dbs.filtersHeld.clearSync();
  let batch: FilteredBlock[] = [];
  let tenant: [string, Environment] | undefined;
  let entries = 0;
  let blocks = 0;
  const seal = (fit: boolean) => {
    if (batch.length === 0) return;
    const [ws, env] = tenant!;
    const sealed = fit ? batch.slice(0, pageFit(batch)) : batch;
    const { key, directory, partitions } = sealedParts(sealed);
    dbs.filters.transactionSync(() => {
      dbs.filters.putSync([ws, env, 0, ...key], packr.pack(directory));
      for (const [p, words] of partitions.entries()) dbs.filters.putSync([ws, env, 1, ...key, p], bytesOf(words));
    });
    blocks += sealed.length;
    batch = batch.slice(sealed.length);
    entries = batch.reduce((n, b) => n + b.size, 0);
  };
  for (const { key, value } of dbs.entries.getRange({ snapshot: false })) {
    const [ws, env, ms, firstId] = key as [string, Environment, number, string];
    if (tenant && (tenant[0] !== ws || tenant[1] !== env)) seal(false);
    tenant = [ws, env];
    const block = storedBlock(dbs.parts, ws, env, ms, firstId, value as Uint8Array)!;
    batch.push({ ms, firstId, size: block.size, stripes: blockFilters(block.entries()) });
    entries += block.size;
    if (entries >= SEAL_ENTRIES || batch.length >= SEAL_BLOCKS) seal(true);
  }
  seal(false);
  return blocks;
}
