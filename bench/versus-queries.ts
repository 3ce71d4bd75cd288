// versus-queries: each standard query as Sluice's query language and as hand-written SQL for PostgreSQL and
// SQLite, side by side, written to return exactly what Sluice returns (contract §6). Where SQL cannot say the
// same thing, the nearest is named in a comment.
//
// Semantics carried over, once for all queries:
// - `~` (case-insensitive substring): PostgreSQL ILIKE '%v%' (LIKE wildcards in v escaped), answered by pg_trgm;
//   SQLite an FTS5 trigram phrase (case_sensitive 0, a substring match). Sluice lowercases with JS toLowerCase,
//   ILIKE with the C.UTF-8 locale's lower(), FTS5 with its own Unicode case folding: the same on every letter
//   of this corpus (ASCII only), the nearest elsewhere.
// - `=` on action: case-insensitive equality: lower(action) in PostgreSQL (an expression index), and in SQLite a
//   column lowercased by JS at load (SQLite's lower() folds ASCII only).
// - `@` and free words: words are maximal runs of letters and digits, lowercased. PostgreSQL: the regex
//   `(^|[^[:alnum:]])word([^[:alnum:]]|$)` case-insensitively (pg_trgm answers it; [:alnum:] is the locale's
//   letters and digits, Sluice's \p{L}\p{N}); SQLite: an FTS5 unicode61 table (remove_diacritics 0), whose
//   tokens are runs of letters, digits and private-use characters (Co): the one difference, absent here.
//   PostgreSQL's own full text (to_tsvector) is not used: its parser keeps emails, paths and hyphenated words
//   whole, so it would answer other entries.
// - `metadata.k=v` compares the field's text form: PostgreSQL a jsonb containment per JSON type v can be (the
//   number and the string); SQLite CAST(json_extract(...) AS TEXT), indexed, where true prints as 1 and 5.0 as
//   5.0 (JSON prints true and 5): the nearest, and no such value is in this corpus.
// - jsonb parameters are sent as text and cast ($1::text::jsonb): Bun.sql would send a JS string as a JSON string.
// - Order is server_timestamp desc, id desc. PostgreSQL sorts by those columns (as logs.id: `id` is the text output
//   column); SQLite stores the entries with rowids in that order (the load checks it) and pages by rowid, the cursor
//   being the rowid of the cursor's id.
import { needleCode, needleEntry } from "./needles.ts";

/** PgQuery is a WHERE clause over `logs` with $1… parameters. */
export interface PgQuery {
  where: string;
  params: unknown[];
}

/** SqliteQuery is a FROM and WHERE (with ? parameters) whose rows carry `l.id`, `l.ts` and the ordering rowid `key`. */
export interface SqliteQuery {
  from: string;
  where: string;
  params: unknown[];
  key: string;
  order?: string;
}

/** A VersusQuery is one standard query in the three systems; `walk` times the whole walk of that many pages. */
export interface VersusQuery {
  name: string;
  body: Record<string, unknown>;
  pg: PgQuery;
  sqlite: SqliteQuery;
  walk?: number;
}

const logs = (where: string, params: unknown[], order?: string): SqliteQuery => ({ from: "logs l", where, params, key: "l.rowid", order });
const trigram = (column: "action" | "message", v: string): SqliteQuery => ({
  from: "tri JOIN logs l ON l.rowid = tri.rowid",
  where: "tri MATCH ?",
  params: [`${column} : ${phrase(v)}`],
  key: "tri.rowid",
});
const words = (match: string): SqliteQuery => ({
  from: "words JOIN logs l ON l.rowid = words.rowid",
  where: "words MATCH ?",
  params: [match],
  key: "words.rowid",
});
const tag = (t: string): SqliteQuery => ({ from: "log_tags t JOIN logs l ON l.rowid = t.log", where: "t.tag = ?", params: [t], key: "t.log" });

/** phrase quotes a string for an FTS5 MATCH expression. */
const phrase = (v: string) => `"${v.replaceAll('"', '""')}"`;
/** like makes a case-insensitive substring pattern for ILIKE, its wildcards escaped. */
const like = (v: string) => `%${v.toLowerCase().replace(/[\\%_]/g, "\\$&")}%`;
/** word is the PostgreSQL regex of one full-text word (letters and digits only, so nothing to escape). */
function word(w: string): string {
  if (!/^[\p{L}\p{N}]+$/u.test(w)) throw new Error(`${w} is not one full-text word`);
  return `(^|[^[:alnum:]])${w.toLowerCase()}([^[:alnum:]]|$)`;
}

/** versusQueries lists the standard queries (bench/query.ts, the table) over a corpus whose middle needle entry is `mid`. */
export function versusQueries(opts: { mid: number; hourFrom: number }): VersusQuery[] {
  const email = (needleEntry(opts.mid).actor as { email: string }).email;
  const code = needleCode(opts.mid);
  const from = new Date(opts.hourFrom).toISOString();
  const to = new Date(opts.hourFrom + 3_600_000).toISOString();
  return [
    { name: "latest page", body: {}, pg: { where: "true", params: [] }, sqlite: logs("1", []) },
    { name: "level=error", body: { query: "level=error" }, pg: { where: "level = $1", params: ["error"] }, sqlite: logs("l.level = ?", ["error"]) },
    { name: "tag=svc-3", body: { query: "tag=svc-3" }, pg: { where: "tags @> ARRAY[$1::text]", params: ["svc-3"] }, sqlite: tag("svc-3") },
    { name: "action~pay", body: { query: "action~pay" }, pg: { where: "action ILIKE $1", params: [like("pay")] }, sqlite: trigram("action", "pay") },
    {
      name: "action=order.paid",
      body: { query: "action=order.paid" },
      pg: { where: "lower(action) = $1", params: ["order.paid"] },
      sqlite: logs("l.action_lc = ?", ["order.paid"]),
    },
    {
      name: "metadata.status_code=404",
      body: { query: "metadata.status_code=404" },
      pg: { where: "(metadata @> $1::text::jsonb OR metadata @> $2::text::jsonb)", params: ['{"status_code":404}', '{"status_code":"404"}'] },
      sqlite: logs("CAST(json_extract(l.metadata, '$.status_code') AS TEXT) = ?", ["404"]),
    },
    {
      name: 'message@"slow checkout"',
      body: { query: 'message@"slow checkout"' },
      pg: { where: "message ~* $1 AND message ~* $2", params: [word("slow"), word("checkout")] },
      sqlite: words('message : ("slow" AND "checkout")'),
    },
    {
      name: 'message~"request 777777 " (rare substring)',
      body: { query: 'message~"request 777777 "' },
      pg: { where: "message ILIKE $1", params: [like("request 777777 ")] },
      sqlite: trigram("message", "request 777777 "),
    },
    {
      name: "one-hour window",
      body: { from, to },
      pg: { where: "server_timestamp >= $1 AND server_timestamp < $2", params: [from, to] },
      sqlite: logs("l.ts >= ? AND l.ts < ?", [Date.parse(from), Date.parse(to)], "l.ts DESC, l.rowid DESC"),
    },
    {
      name: "level=warn tag=region-2 action~order",
      body: { query: "level=warn tag=region-2 action~order" },
      pg: { where: "level = $1 AND tags @> ARRAY[$2::text] AND action ILIKE $3", params: ["warn", "region-2", like("order")] },
      // the lowercased column makes instr() an exact case-insensitive substring test on the rows the level index finds
      sqlite: logs("l.level = ? AND EXISTS (SELECT 1 FROM log_tags t WHERE t.tag = ? AND t.log = l.rowid) AND instr(l.action_lc, ?) > 0", [
        "warn",
        "region-2",
        "order",
      ]),
    },
    {
      name: "tag=openssh (rare tag)",
      body: { query: "tag=openssh" },
      pg: { where: "tags @> ARRAY[$1::text]", params: ["openssh"] },
      sqlite: tag("openssh"),
    },
    {
      name: '"authentication failure" (rare phrase)',
      body: { query: '"authentication failure"' },
      // a quoted free phrase: all its words in the action, or all in the message (not adjacency)
      pg: { where: "((action ~* $1 AND action ~* $2) OR (message ~* $1 AND message ~* $2))", params: [word("authentication"), word("failure")] },
      sqlite: words('(action : ("authentication" AND "failure")) OR (message : ("authentication" AND "failure"))'),
    },
    {
      name: `actor.email="${email}" (rare)`,
      body: { query: `actor.email="${email}"` },
      pg: { where: "actor @> $1::text::jsonb", params: [JSON.stringify({ email })] },
      sqlite: logs("CAST(json_extract(l.actor, '$.email') AS TEXT) = ?", [email]),
    },
    {
      name: `message~"${code}" (rare code)`,
      body: { query: `message~"${code}"` },
      pg: { where: "message ILIKE $1", params: [like(code)] },
      sqlite: trigram("message", code),
    },
    {
      name: "connection timed (free words)",
      body: { query: "connection timed" },
      // each free word in the action or in the message
      pg: { where: "(action ~* $1 OR message ~* $1) AND (action ~* $2 OR message ~* $2)", params: [word("connection"), word("timed")] },
      sqlite: words('"connection" AND "timed"'),
    },
    {
      name: "20 pages through the cursor (level=warn, whole walk)",
      body: { query: "level=warn" },
      pg: { where: "level = $1", params: ["warn"] },
      sqlite: logs("l.level = ?", ["warn"]),
      walk: 20,
    },
  ];
}
