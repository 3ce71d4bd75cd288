// data: entries for benchmarks — real Loghub lines mapped as its README says, and synthetic ones beside them.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** LOGHUB_DIR is the Loghub data set: SLUICE_LOGHUB_DIR, else beside a checkout in the shared folder (it is not in the repository). */
export const LOGHUB_DIR = process.env.SLUICE_LOGHUB_DIR ?? join(import.meta.dir, "..", "..", "shared", "datasets", "loghub");

/** hasLoghub tells whether the Loghub files are there; without them the benches use lines made from TEMPLATES. */
export const hasLoghub = () => existsSync(LOGHUB_DIR) && readdirSync(LOGHUB_DIR).some((f) => f.endsWith(".csv"));
const LEVEL: Record<string, string> = {
  INFO: "info",
  WARN: "warn",
  WARNING: "warn",
  ERROR: "error",
  SEVERE: "error",
  FATAL: "fatal",
  DEBUG: "debug",
  TRACE: "trace",
  notice: "info",
  error: "error",
  warn: "warn",
  info: "info",
  debug: "debug",
};

/** parseCsvLine splits one CSV line, honouring double-quoted fields. */
export function parseCsvLine(line: string): string[] {
  const out: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      out.push(field);
      field = "";
    } else field += c;
  }
  out.push(field);
  return out;
}

/** loghubEntries maps every Loghub line to a CreateLogRequest (system name as a tag); lines made from templates without the data set. */
export function loghubEntries(): Record<string, unknown>[] {
  if (!hasLoghub()) return Array.from({ length: 32_000 }, (_, i) => templateEntry(i, TEMPLATES));
  const entries: Record<string, unknown>[] = [];
  for (const file of readdirSync(LOGHUB_DIR)
    .filter((f) => f.endsWith(".csv"))
    .sort()) {
    const system = file.split("_")[0];
    const [header, ...lines] = readFileSync(join(LOGHUB_DIR, file), "utf8").split(/\r?\n/).filter(Boolean); // most of the files end lines with CRLF
    const cols = parseCsvLine(header);
    for (const line of lines) {
      const row = Object.fromEntries(parseCsvLine(line).map((v, i) => [cols[i], v]));
      entries.push({
        action: `${system.toLowerCase()}.${row.Component || row.EventId || "event"}`.slice(0, 255),
        level: LEVEL[row.Level ?? ""] ?? "info",
        message: row.Content ?? "",
        tags: [system.toLowerCase(), row.EventId].filter(Boolean),
        context: { system, line: Number(row.LineId) },
        metadata: row.Pid ? { pid: Number(row.Pid) || row.Pid, event: row.EventId } : { event: row.EventId },
        clientTimestamp: new Date(Date.UTC(2026, 10, 1) + Number(row.LineId) * 1000).toISOString(),
      });
    }
  }
  return entries;
}

const ACTIONS = ["user.login", "user.logout", "order.created", "order.paid", "payment.failed", "cart.updated", "email.sent", "job.finished"];
const LEVELS = ["trace", "debug", "info", "info", "info", "warn", "error", "fatal"];
const WORDS = ["timeout", "retry", "connected", "database", "cache", "miss", "user", "request", "slow", "checkout", "token", "refresh"];

/** mulberry32 is a small seeded PRNG: independent draws per field, the same entry for the same seed. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** syntheticEntry makes a deterministic ~330-byte entry from a seed. */
export function syntheticEntry(i: number): Record<string, unknown> {
  const rand = mulberry32(i * 2654435761);
  const r = (_n: number) => Math.floor(rand() * 1000);
  return {
    action: ACTIONS[r(3) % ACTIONS.length],
    level: LEVELS[r(5) % LEVELS.length],
    message: `${WORDS[r(7) % WORDS.length]} ${WORDS[r(11) % WORDS.length]} for request ${i} after ${r(13)} ms`,
    tags: [`svc-${r(2) % 12}`, `region-${r(9) % 4}`],
    actor: { id: `user-${r(4)}`, role: r(6) % 2 ? "admin" : "member" },
    context: { ip: `10.0.${r(8) % 255}.${r(10) % 255}`, request_id: `req-${i}` },
    metadata: { status_code: [200, 201, 400, 404, 500][r(12) % 5], duration_ms: r(14) },
    clientTimestamp: new Date(Date.UTC(2026, 10, 1) + i * 37).toISOString(),
  };
}

/** Template is a system's log line with <*> where values go, as Loghub's EventTemplate column has it. */
interface Template {
  system: string;
  event: string;
  level: string;
  component: string;
  text: string;
}

/** TEMPLATES are lines in the manner of Loghub's systems, for a checkout without the data set. */
const TEMPLATES: Template[] = [
  ["Apache", "E2", "info", "core", "workerEnv.init() ok <*>"],
  ["Apache", "E3", "error", "core", "mod_jk child workerEnv in error state <*>"],
  ["Apache", "E1", "info", "core", "jk2_init() Found child <*> in scoreboard slot <*>"],
  ["HDFS", "E5", "info", "dfs.DataNode$DataXceiver", "Receiving block <*> src: /<*> dest: /<*>"],
  ["HDFS", "E9", "info", "dfs.FSNamesystem", "BLOCK* NameSystem.addStoredBlock: blockMap updated: <*> is added to <*> size <*>"],
  ["HDFS", "E11", "info", "dfs.DataNode$PacketResponder", "PacketResponder <*> for block <*> terminating"],
  ["OpenSSH", "E27", "info", "sshd", "Failed password for invalid user <*> from <*> port <*> ssh2"],
  ["OpenSSH", "E2", "info", "sshd", "Connection closed by <*> [preauth]"],
  ["OpenSSH", "E13", "info", "sshd", "pam_unix(sshd:auth): authentication failure; logname= uid=<*> euid=<*> tty=ssh ruser= rhost=<*>"],
  [
    "Zookeeper",
    "E32",
    "warn",
    "NIOServerCnxn",
    "caught end of stream exception, EndOfStreamException: Unable to read additional data from client sessionid <*>",
  ],
  ["Zookeeper", "E21", "info", "NIOServerCnxnFactory", "Accepted socket connection from /<*>:<*>"],
  ["Spark", "E22", "info", "storage.MemoryStore", "Block <*> stored as values in memory (estimated size <*> KB, free <*> MB)"],
  ["Spark", "E11", "info", "executor.Executor", "Finished task <*> in stage <*> (TID <*>). <*> bytes result sent to driver"],
  ["BGL", "E77", "error", "KERNEL", "instruction cache parity error corrected at <*>"],
  ["OpenStack", "E25", "info", "nova.osapi_compute.wsgi.server", '<*> "GET <*> HTTP/1.1" status: <*> len: <*> time: <*>'],
  ["Linux", "E16", "info", "sshd(pam_unix)", "session opened for user <*> by (uid=<*>)"],
].map(([system, event, level, component, text]) => ({ system, event, level, component, text }));

/** templatesOf reads the data set's distinct (system, EventId) templates with a level and component seen for each. */
function templatesOf(): Template[] {
  const seen = new Map<string, Template>();
  for (const file of readdirSync(LOGHUB_DIR).filter((f) => f.endsWith(".csv"))) {
    const system = file.split("_")[0];
    const [header, ...lines] = readFileSync(join(LOGHUB_DIR, file), "utf8").split(/\r?\n/).filter(Boolean); // most of the files end lines with CRLF
    const cols = parseCsvLine(header);
    for (const line of lines) {
      const row = Object.fromEntries(parseCsvLine(line).map((v, i) => [cols[i], v]));
      const key = `${system}/${row.EventId}`;
      if (!seen.has(key) && row.EventTemplate)
        seen.set(key, { system, event: row.EventId, level: LEVEL[row.Level ?? ""] ?? "info", component: row.Component || "event", text: row.EventTemplate });
    }
  }
  return [...seen.values()];
}

/** templateEntry fills a template's <*> with values drawn from the seed: templates repeat, values vary, as in real logs. */
function templateEntry(i: number, templates: Template[]): Record<string, unknown> {
  const rand = mulberry32(i * 2246822519 + 7);
  const t = templates[Math.floor(rand() * templates.length)];
  const value = () => {
    const kind = Math.floor(rand() * 5);
    if (kind === 0) return String(Math.floor(rand() * 100_000));
    if (kind === 1) return `10.${Math.floor(rand() * 256)}.${Math.floor(rand() * 256)}.${Math.floor(rand() * 256)}`;
    if (kind === 2) return `blk_${Math.floor(rand() * 2 ** 52)}`;
    if (kind === 3) return Math.floor(rand() * 2 ** 32).toString(16);
    return ["root", "admin", "hadoop", "spark", "nobody", "ubuntu"][Math.floor(rand() * 6)] + Math.floor(rand() * 100);
  };
  const message = t.text.replace(/<\*>/g, value);
  const pid = 1000 + Math.floor(rand() * 30_000);
  return {
    action: `${t.system.toLowerCase()}.${t.component}`.slice(0, 255),
    level: t.level,
    message,
    tags: [t.system.toLowerCase(), t.event],
    context: { system: t.system, line: i },
    metadata: { pid, event: t.event },
    clientTimestamp: new Date(Date.UTC(2026, 10, 1) + i * 250).toISOString(),
  };
}

/** loghubLike makes distinct Loghub-style entries from the data set's templates, or from TEMPLATES without it. */
export function loghubLike(): (i: number) => Record<string, unknown> {
  const templates = hasLoghub() ? templatesOf() : TEMPLATES;
  return (i) => templateEntry(i, templates);
}
