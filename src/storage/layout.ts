// layout: which key layout a data directory's indexes are in, and the rebuild that brings older ones up to date.
//
// Key layout (db `layout`): "indexes" → the version of the postings' and the dictionary's keys.
//   1 (no version stored): terms of up to 200 UTF-16 units stood in keys as themselves; the key encoding
//     misreads some of 64 or more (keys.ts), so their postings were lost and the dictionary could not be read.
//   2: terms of 64 or more units stand in keys as their hash.
//   3: every block has a filter of its rare values (needle-index.ts); version 2 has none.
//   4: the filters hold the hex grams of messages and actions (needles.ts); version 3's do not.
//   5: the filters hold the full-text words of messages and actions; version 4's do not.
//   6: db `stats` counts each workspace environment's entries, raw bytes and block bytes (stats.ts), and db `bounds`
//      holds each block's client time bounds (bounds.ts); version 5 has neither.
//   7: db `bounds` lists the blocks by their latest client time too (bounds.ts); version 6 has the bounds alone.
// The blocks are the truth and every index derives from them, so an upgrade drops the indexes and
// rebuilds them from the blocks. A crash during it leaves the old version, and the next open starts over.
import type { Database } from "lmdb";
import type { Environment } from "../schema.ts";
import type { Block } from "./format/block.ts";
import { storedBlock, storedBytes } from "./format/part.ts";
import { Dictionary } from "./indexes/dictionary.ts";
import { blockTerms } from "./indexes/posting-terms.ts";
import { textKey } from "./keys.ts";
import { rebuildFilters } from "./indexes/needle-rebuild.ts";
import { StatsStore } from "./stats.ts";
import { BoundsStore, clientBoundsOf, type ClientBounds } from "./indexes/bounds.ts";

export const INDEX_LAYOUT = 7;
const BLOCKS_PER_TRANSACTION = 64;

export interface LayoutDatabases {
  layout: Database;
  entries: Database;
  /** merged parts of blocks (part.ts) */
  parts: Database;
  postings: Database;
  unindexed: Database;
  dictionary: Database;
  filters: Database;
  filtersHeld: Database;
  stats: Database;
  bounds: Database;
}

/** upgradeIndexes rebuilds the indexes of a data directory whose index layout is older; it returns the blocks read. */
export function upgradeIndexes(dbs: LayoutDatabases, log: (line: Record<string, unknown>) => void): number {
  const version = (dbs.layout.get("indexes") as number | undefined) ?? (dbs.entries.getKeysCount({ limit: 1 }) === 0 ? INDEX_LAYOUT : 1);
  if (version >= INDEX_LAYOUT) {
    if (dbs.layout.get("indexes") === undefined) dbs.layout.putSync("indexes", INDEX_LAYOUT);
    return 0;
  }
  const blocks = version < 2 ? rebuildPostings(dbs, version, log) : 0;
  let filtered = 0;
  if (version < 5) {
    log({ level: "info", msg: `index layout ${version} has no filters of rare values, hex runs or words: building them from the blocks` });
    filtered = rebuildFilters(dbs);
    log({ level: "info", msg: `index layout 5: filters built for ${filtered} blocks` });
  }
  if (version === 6) {
    const listed = new BoundsStore(dbs.bounds).indexByHi();
    log({ level: "info", msg: `index layout ${INDEX_LAYOUT}: ${listed} blocks listed by their latest client time` });
    dbs.layout.putSync("indexes", INDEX_LAYOUT);
    return listed;
  }
  const counted = rebuildStats(dbs);
  log({
    level: "info",
    msg: `index layout ${INDEX_LAYOUT}: what each workspace environment stores, and each block's client time bounds, from ${counted} blocks`,
  });
  dbs.layout.putSync("indexes", INDEX_LAYOUT);
  return Math.max(blocks, filtered, counted);
}

/** rebuildStats counts every block into db `stats` anew and stores its client time bounds; it returns the blocks counted. */
function rebuildStats(dbs: LayoutDatabases): number {
  dbs.stats.clearSync();
  dbs.bounds.clearSync();
  const stats = new StatsStore(dbs.stats);
  const bounds = new BoundsStore(dbs.bounds);
  const tenants = new Map<string, [string, Environment]>();
  let batch: [string, Environment, number, string, ClientBounds][] = [];
  const store = () => {
    dbs.bounds.transactionSync(() => {
      for (const [ws, env, ms, firstId, b] of batch) bounds.putSync(ws, env, ms, firstId, b);
    });
    batch = [];
  };
  let blocks = 0;
  for (const { key, value } of dbs.entries.getRange({ snapshot: false })) {
    const [ws, env, ms, firstId] = key as [string, Environment, number, string];
    const bytes = value as Uint8Array;
    const block = storedBlock(dbs.parts, ws, env, ms, firstId, bytes)!;
    stats.add(ws, env, block.size, block.rawSize(), storedBytes(dbs.parts, ws, env, ms, firstId, bytes));
    batch.push([ws, env, ms, firstId, clientBoundsOf(block.size, (i) => block.clientMs(i))]);
    if (batch.length === BLOCKS_PER_TRANSACTION * 16) store();
    tenants.set(`${ws}\u0000${env}`, [ws, env]);
    blocks++;
  }
  store();
  dbs.stats.transactionSync(() => {
    for (const [ws, env] of tenants.values()) stats.putSync(ws, env);
  });
  return blocks;
}

function rebuildPostings(dbs: LayoutDatabases, version: number, log: (line: Record<string, unknown>) => void): number {
  log({ level: "info", msg: `index layout ${version} is older than ${INDEX_LAYOUT}: rebuilding the postings and the action dictionary from the blocks` });
  dbs.postings.clearSync();
  dbs.dictionary.clearSync();
  dbs.unindexed.clearSync(); // every posting is rebuilt below: none is held
  const dictionary = new Dictionary(dbs.dictionary);
  let batch: { key: [string, Environment, number, string]; block: Block }[] = [];
  let blocks = 0;
  const store = () => {
    dbs.postings.transactionSync(() => {
      for (const {
        key: [ws, env, ms, firstId],
        block,
      } of batch) {
        const entries = block.entries();
        for (const [kind, term, positions] of blockTerms(entries)) dbs.postings.putSync([ws, env, kind, textKey(term), ms, firstId], positions);
        for (const action of new Set(entries.map((e) => e.action))) dictionary.addSync(ws, env, action);
      }
    });
    blocks += batch.length;
    batch = [];
  };
  for (const { key, value } of dbs.entries.getRange({ snapshot: false })) {
    const k = key as [string, Environment, number, string];
    batch.push({ key: k, block: storedBlock(dbs.parts, k[0], k[1], k[2], k[3], value as Uint8Array)! });
    if (batch.length === BLOCKS_PER_TRANSACTION) store();
  }
  store();
  log({ level: "info", msg: `postings and action dictionary rebuilt from ${blocks} blocks` });
  return blocks;
}
