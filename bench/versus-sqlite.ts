// versus-sqlite: SQLite (bun:sqlite) for bench/versus.ts, set up as a good SQLite user would for these queries:
// WAL, a large cache and mmap; rowids in Sluice's order; a tag table; b-tree indexes on level, the lowercased
// action, the time and the two JSON fields queried (SQLite has no index over every JSON value: a user indexes the
// fields they search); FTS5 over action and message twice, trigram (substrings) and unicode61 (words), both as
// external-content tables built after the rows.
import { Database, type Statement } from "bun:sqlite";
import { statSync } from "node:fs";
import type { SqliteQuery } from "./versus-queries.ts";

/** A StoredRow is an entry as a database returns it: the JSON fields as JSON text. */
export interface StoredRow {
  id: string;
  level: string;
  action: string;
  message: string;
  tags: string;
  actor: string | null;
  target: string | null;
  context: string | null;
  metadata: string | null;
}

/** A Row is one entry of a page with its server and client timestamps in ms. */
export interface Row extends StoredRow {
  ms: number;
  clientMs: number | null;
}

/** A SqliteEntry is what the bench stores of one entry. */
export interface SqliteEntry {
  id: string;
  ms: number;
  clientMs: number | null;
  level: string;
  action: string;
  message: string;
  tags: string[];
  actor: unknown;
  target: unknown;
  context: unknown;
  metadata: unknown;
}

const SCHEMA = [
  "PRAGMA journal_mode = WAL",
  "PRAGMA synchronous = NORMAL",
  "PRAGMA cache_size = -262144",
  "PRAGMA mmap_size = 4294967296",
  "PRAGMA temp_store = MEMORY",
  `CREATE TABLE logs (seq INTEGER PRIMARY KEY, id TEXT NOT NULL, ts INTEGER NOT NULL, client_ts INTEGER,
    level TEXT NOT NULL, action TEXT NOT NULL, action_lc TEXT NOT NULL, message TEXT NOT NULL, tags TEXT NOT NULL,
    actor TEXT, target TEXT, context TEXT, metadata TEXT)`,
  "CREATE TABLE log_tags (tag TEXT NOT NULL, log INTEGER NOT NULL, PRIMARY KEY (tag, log)) WITHOUT ROWID",
];

const INDEXES = [
  "CREATE UNIQUE INDEX logs_id ON logs (id)",
  "CREATE INDEX logs_ts ON logs (ts)",
  "CREATE INDEX logs_level ON logs (level)",
  "CREATE INDEX logs_action ON logs (action_lc)",
  "CREATE INDEX logs_status_code ON logs (CAST(json_extract(metadata, '$.status_code') AS TEXT))",
  "CREATE INDEX logs_actor_email ON logs (CAST(json_extract(actor, '$.email') AS TEXT))",
  "CREATE VIRTUAL TABLE tri USING fts5 (action, message, content = 'logs', content_rowid = 'seq', tokenize = 'trigram')",
  "INSERT INTO tri (tri) VALUES ('rebuild')",
  "CREATE VIRTUAL TABLE words USING fts5 (action, message, content = 'logs', content_rowid = 'seq', tokenize = 'unicode61 remove_diacritics 0')",
  "INSERT INTO words (words) VALUES ('rebuild')",
  "ANALYZE",
  "PRAGMA wal_checkpoint(TRUNCATE)",
];

const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));

/** Sqlite is the bench's database file with its statements. */
export class Sqlite {
  private readonly db: Database;
  private readonly insertLog: Statement;
  private readonly insertTag: Statement;
  private readonly pages = new Map<string, Statement>();
  private seq = 0;

  constructor(readonly path: string) {
    this.db = new Database(path, { create: true, strict: true });
    for (const s of SCHEMA) this.db.run(s);
    this.insertLog = this.db.prepare(
      "INSERT INTO logs (seq, id, ts, client_ts, level, action, action_lc, message, tags, actor, target, context, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    );
    this.insertTag = this.db.prepare("INSERT OR IGNORE INTO log_tags (tag, log) VALUES (?, ?)");
  }

  /** append stores entries given in Sluice's ascending order (the caller checks it), one transaction. */
  append(entries: SqliteEntry[]): void {
    this.db.transaction(() => {
      for (const e of entries) {
        const seq = ++this.seq;
        this.insertLog.run(
          seq,
          e.id,
          e.ms,
          e.clientMs,
          e.level,
          e.action,
          e.action.toLowerCase(),
          e.message,
          JSON.stringify(e.tags),
          json(e.actor),
          json(e.target),
          json(e.context),
          json(e.metadata),
        );
        for (const t of e.tags) this.insertTag.run(t, seq);
      }
    })();
  }

  /** index builds the indexes, full text and statistics after the rows are in. */
  index(): void {
    for (const s of INDEXES) this.db.run(s);
  }

  /** bytes is the size of the database file. */
  bytes(): number {
    return statSync(this.path).size;
  }

  /** page answers one page (up to 51 rows, the 51st telling more match) after the cursor's entry, in Sluice's order. */
  page(q: SqliteQuery, cursor?: { id: string }): Row[] {
    const after = cursor ? ` AND ${q.key} < (SELECT seq FROM logs WHERE id = ?)` : "";
    const text = `SELECT l.id AS id, l.ts AS ms, l.client_ts AS clientMs, l.level AS level, l.action AS action, l.message AS message, l.tags AS tags, l.actor AS actor, l.target AS target, l.context AS context, l.metadata AS metadata FROM ${q.from} WHERE ${q.where}${after} ORDER BY ${q.order ?? `${q.key} DESC`} LIMIT 51`;
    let statement = this.pages.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.pages.set(text, statement);
    }
    return statement.all(...((cursor ? [...q.params, cursor.id] : q.params) as string[])) as Row[];
  }

  /** count is how many entries match a query. */
  count(q: SqliteQuery): number {
    return (this.db.prepare(`SELECT count(*) AS n FROM ${q.from} WHERE ${q.where}`).get(...(q.params as string[])) as { n: number }).n;
  }

  /** explain shows the plan SQLite picks for a query's first page. */
  explain(q: SqliteQuery): string {
    const text = `EXPLAIN QUERY PLAN SELECT l.id FROM ${q.from} WHERE ${q.where} ORDER BY ${q.order ?? `${q.key} DESC`} LIMIT 51`;
    return (this.db.prepare(text).all(...(q.params as string[])) as { detail: string }[]).map((r) => r.detail).join("; ");
  }

  close(): void {
    this.db.close();
  }
}
