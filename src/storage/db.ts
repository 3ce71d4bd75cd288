// db: opens the one LMDB environment of a data directory and its named databases.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { open, type Database, type RootDatabase } from "lmdb";
import { DiskSpace } from "./disk.ts";
import { upgradeIndexes } from "./layout.ts";

export interface Databases {
  root: RootDatabase;
  /** the LMDB data file, for its size */
  dataFile: string;
  /** whether the data directory's disk refused the last write for want of room (disk.ts) */
  disk: DiskSpace;
  /** entries: block key → block of entries (see entries.ts for the layout). */
  entries: Database;
  /** parts: blocks merged into parts, each read through the pointer its block's key in entries holds (part.ts, merge.ts). */
  parts: Database;
  /** postings, dictionary, fulltext: the indexes (postings.ts, dictionary.ts, fulltext.ts). */
  postings: Database;
  /** unindexed: blocks whose postings are held in memory, not yet stored (postings.ts). */
  unindexed: Database;
  dictionary: Database;
  fulltext: Database;
  /** filters: sealed segments of the blocks' filters; filtersHeld: the filters not yet sealed (needle-index.ts). */
  filters: Database;
  filtersHeld: Database;
  /** meta: organizations, workspaces, keys, the admin token hash (see meta.ts). */
  meta: Database;
  /** usage: entries written per workspace and month (see usage.ts). */
  usage: Database;
  /** layout: the version of the indexes' key layout (see layout.ts). */
  layout: Database;
  /** stats: what each workspace environment stores, for the storage report (see stats.ts). */
  stats: Database;
  /** bounds: each block's earliest and latest client timestamp (see bounds.ts). */
  bounds: Database;
  /** alerts: alert channels, rules, silences, states, history and the notification outbox (see alerts.ts). */
  alerts: Database;
  /** cells: the alert evaluator's counts saved at a clean stop, for the next start to check and reuse (records/cells.ts). */
  cells: Database;
}

/** 1 TiB: address space only, of the 128 TiB a process has; a process holding many environments maps less each */
const DEFAULT_MAP_BYTES = 2 ** 40;
const logLine = (line: Record<string, unknown>) => console.error(JSON.stringify(line));

/**
 * openDatabases opens (creating if needed) the LMDB environment in dataDir, its indexes in the current key layout.
 * `mapBytes` is the address space it maps at first (lmdb-js maps more when the file outgrows it).
 */
export function openDatabases(dataDir: string, log = logLine, mapBytes = DEFAULT_MAP_BYTES): Databases {
  mkdirSync(dataDir, { recursive: true });
  const dataFile = join(dataDir, "sluice.mdb");
  const root = open({
    path: dataFile,
    maxDbs: 16,
    mapSize: mapBytes, // address space only; the file grows as data does
    // lmdb-js default: overlappingSync. A put resolves at commit, which survives kill -9 of this process.
  });
  const dbs: Databases = {
    root,
    dataFile,
    disk: new DiskSpace(dataDir),
    entries: root.openDB({ name: "entries", encoding: "binary" }),
    parts: root.openDB({ name: "parts", encoding: "binary" }),
    postings: root.openDB({ name: "postings", encoding: "binary" }),
    unindexed: root.openDB({ name: "unindexed", encoding: "binary" }),
    dictionary: root.openDB({ name: "dictionary", encoding: "msgpack" }),
    fulltext: root.openDB({ name: "fulltext", encoding: "msgpack" }),
    filters: root.openDB({ name: "filters", encoding: "binary" }),
    filtersHeld: root.openDB({ name: "filtersHeld", encoding: "binary" }),
    meta: root.openDB({ name: "meta", encoding: "msgpack" }),
    usage: root.openDB({ name: "usage", encoding: "msgpack" }),
    layout: root.openDB({ name: "layout", encoding: "msgpack" }),
    stats: root.openDB({ name: "stats", encoding: "msgpack" }),
    bounds: root.openDB({ name: "bounds", encoding: "binary" }),
    alerts: root.openDB({ name: "alerts", encoding: "msgpack" }),
    cells: root.openDB({ name: "cells", encoding: "binary" }),
  };
  upgradeIndexes(dbs, log);
  return dbs;
}
