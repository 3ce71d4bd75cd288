// wire: stored entries in the wire shape of interface §2.1, and a page's next cursor as headers (contract §5).
import type { Environment, LogEntry } from "../schema.ts";
import type { Entry, Row } from "../storage/entries.ts";
import { formatMs, formatMsRepeated } from "../time.ts";

/** toLogEntry renders a stored entry in the wire shape of interface §2.1. */
export function toLogEntry(env: Environment, serverMs: number, e: Entry): LogEntry {
  return {
    id: e.id,
    environment: env,
    level: e.level,
    action: e.action,
    message: e.message,
    tags: e.tags,
    actor: e.actor,
    target: e.target,
    context: e.context,
    metadata: e.metadata,
    client_timestamp: formatMs(e.clientMs),
    server_timestamp: formatMsRepeated(serverMs),
  };
}

/** pageHeaders carries the cursor of the page after `rows` as X-Next-Cursor-ID / X-Next-Cursor-TS when more entries match. */
export function pageHeaders(rows: Row[], more: boolean): Record<string, string> {
  const last = rows[rows.length - 1];
  if (!more || !last) return {};
  return { "x-next-cursor-id": last.entry.id, "x-next-cursor-ts": formatMsRepeated(last.serverMs) };
}
