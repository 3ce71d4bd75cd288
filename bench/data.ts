// data: entries for benchmarks — real Loghub lines mapped as its README says, and synthetic ones beside them.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export const LOGHUB_DIR = join(import.meta.dir, "..", "..", "shared", "datasets", "loghub");
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

/** loghubEntries maps every Loghub line to a CreateLogRequest (system name as a tag). */
export function loghubEntries(): Record<string, unknown>[] {
  const entries: Record<string, unknown>[] = [];
  for (const file of readdirSync(LOGHUB_DIR)
    .filter((f) => f.endsWith(".csv"))
    .sort()) {
    const system = file.split("_")[0];
    const [header, ...lines] = readFileSync(join(LOGHUB_DIR, file), "utf8").split("\n").filter(Boolean);
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
