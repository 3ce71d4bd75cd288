// versus-pg: a throwaway PostgreSQL 15 cluster for bench/versus.ts: started in a temp dir on 127.0.0.1 on a free
// port, loaded with COPY from a CSV the bench writes, indexed as a good PostgreSQL user would, and stopped and
// deleted at the end. Tags are a text[] (a GIN index; PostgreSQL keeps statistics of array elements, not of jsonb). As root, the cluster runs as the `postgres` user (initdb refuses root).
import { SQL } from "bun";
import { chownSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Row, StoredRow } from "./versus-sqlite.ts";
import type { PgQuery } from "./versus-queries.ts";

const BIN = process.env.PG_BIN ?? "/usr/lib/postgresql/15/bin";
const ROOT = process.getuid?.() === 0;

/** SETTINGS are the server settings: memory for a 1M-row table on this machine, no JIT (it slows short queries), plans made for the values. */
const SETTINGS = [
  "listen_addresses=127.0.0.1",
  "shared_buffers=1GB",
  "work_mem=32MB",
  "maintenance_work_mem=1GB",
  "effective_cache_size=4GB",
  "random_page_cost=1.1",
  "max_wal_size=8GB",
  "jit=off",
  "plan_cache_mode=force_custom_plan", // Bun.sql prepares statements: a generic plan for `~*` with unknown values scans
];

/** The columns of `logs`, in the CSV's order. */
export const PG_COLUMNS = ["id", "server_timestamp", "client_timestamp", "level", "action", "message", "tags", "actor", "target", "context", "metadata"];

const SCHEMA = `
CREATE EXTENSION pg_trgm;
CREATE TABLE logs (
  id uuid NOT NULL, server_timestamp timestamptz NOT NULL, client_timestamp timestamptz,
  level text NOT NULL, action text NOT NULL, message text NOT NULL, tags text[] NOT NULL,
  actor jsonb, target jsonb, context jsonb, metadata jsonb)`;

const INDEXES = [
  "ALTER TABLE logs ADD PRIMARY KEY (id)",
  "CREATE INDEX logs_order ON logs (server_timestamp DESC, id DESC)",
  "CREATE INDEX logs_level ON logs (level, server_timestamp DESC, id DESC)",
  "CREATE INDEX logs_action_eq ON logs (lower(action), server_timestamp DESC, id DESC)",
  "CREATE INDEX logs_tags ON logs USING gin (tags)",
  "CREATE INDEX logs_action_trgm ON logs USING gin (action gin_trgm_ops)",
  "CREATE INDEX logs_message_trgm ON logs USING gin (message gin_trgm_ops)",
  "CREATE INDEX logs_actor ON logs USING gin (actor jsonb_path_ops)",
  "CREATE INDEX logs_target ON logs USING gin (target jsonb_path_ops)",
  "CREATE INDEX logs_context ON logs USING gin (context jsonb_path_ops)",
  "CREATE INDEX logs_metadata ON logs USING gin (metadata jsonb_path_ops)",
  "VACUUM ANALYZE logs",
];

/** COLUMNS are what a page reads of each entry: all of it, the JSON as its text. */
const COLUMNS =
  "id::text AS id, server_timestamp AS ts, client_timestamp AS client, level, action, message, to_json(tags)::text AS tags, actor::text AS actor, target::text AS target, context::text AS context, metadata::text AS metadata";

/** Postgres is one running cluster with a connection to it. */
export class Postgres {
  private constructor(
    private readonly dir: string,
    readonly port: number,
    readonly sql: SQL,
  ) {}

  /** start creates a cluster in a temp dir and starts it on a free port of 127.0.0.1. */
  static async start(): Promise<Postgres> {
    const dir = mkdtempSync(join(tmpdir(), "sluice-versus-pg-"));
    if (ROOT) {
      const uid = Number(run(["id", "-u", "postgres"]).trim());
      const gid = Number(run(["id", "-g", "postgres"]).trim());
      chownSync(dir, uid, gid);
    }
    const port = await freePort();
    run([`${BIN}/initdb`, "-D", join(dir, "data"), "-U", "bench", "--locale=C.UTF-8", "-E", "UTF8", "--auth=trust"], true);
    const opts = [`-p ${port}`, `-k ${dir}`, ...SETTINGS.map((s) => `-c ${s}`)].join(" ");
    run([`${BIN}/pg_ctl`, "-D", join(dir, "data"), "-o", opts, "-l", join(dir, "log"), "-w", "start"], true);
    const sql = new SQL({ hostname: "127.0.0.1", port, username: "bench", database: "postgres", max: 4 });
    await sql.unsafe(SCHEMA);
    return new Postgres(dir, port, sql);
  }

  /** load copies the CSV into `logs` with psql's \copy, then builds the indexes and the statistics. */
  async load(csv: string): Promise<void> {
    const copy = `\\copy logs (${PG_COLUMNS.join(", ")}) FROM '${csv}' WITH (FORMAT csv)`;
    run([`${BIN}/psql`, "-h", "127.0.0.1", "-p", String(this.port), "-U", "bench", "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-c", copy]);
    for (const statement of INDEXES) await this.sql.unsafe(statement);
  }

  /** bytes is the size of the table with its indexes and TOAST. */
  async bytes(): Promise<number> {
    const [{ size }] = await this.sql.unsafe("SELECT pg_total_relation_size('logs')::bigint AS size");
    return Number(size);
  }

  /** page answers one page (up to 51 rows, the 51st telling more match) after the cursor, in Sluice's order. */
  async page(q: PgQuery, cursor?: { id: string; ts: string }): Promise<Row[]> {
    const n = q.params.length;
    const after = cursor ? ` AND (server_timestamp, id) < ($${n + 1}::timestamptz, $${n + 2}::uuid)` : "";
    const text = `SELECT ${COLUMNS} FROM logs WHERE ${q.where}${after} ORDER BY logs.server_timestamp DESC, logs.id DESC LIMIT 51`;
    const rows = (await this.sql.unsafe(text, cursor ? [...q.params, cursor.ts, cursor.id] : q.params)) as (StoredRow & { ts: Date; client: Date | null })[];
    return rows.map((r) => ({ ...r, ms: r.ts.getTime(), clientMs: r.client ? r.client.getTime() : null }));
  }

  /** explain runs a query's first page and shows the plan PostgreSQL picks for a query's first page. */
  async explain(q: PgQuery): Promise<string> {
    const text = `EXPLAIN ANALYZE SELECT ${COLUMNS} FROM logs WHERE ${q.where} ORDER BY logs.server_timestamp DESC, logs.id DESC LIMIT 51`;
    const rows = (await this.sql.unsafe(text, q.params)) as { "QUERY PLAN": string }[];
    return rows.map((r) => r["QUERY PLAN"]).join("\n");
  }

  /** stop stops the cluster and deletes it. */
  async stop(): Promise<void> {
    await this.sql.close();
    try {
      run([`${BIN}/pg_ctl`, "-D", join(this.dir, "data"), "-m", "fast", "-w", "stop"], true);
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}

/** run runs a command (as the postgres user when asked and we are root) and fails with its output. */
function run(cmd: string[], asPostgres = false): string {
  const argv = asPostgres && ROOT ? ["runuser", "-u", "postgres", "--", ...cmd] : cmd;
  const r = Bun.spawnSync(argv, { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${cmd[0]} failed (${r.exitCode}): ${r.stderr.toString()}${r.stdout.toString()}`);
  return r.stdout.toString();
}

/** freePort asks the kernel for a port free on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}
