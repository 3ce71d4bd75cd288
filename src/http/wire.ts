// wire: stored entries in the wire shape of interface §2.1, and a page's next cursor as headers (contract §5).
import type { Environment, LogEntry } from "../schema.ts";
import { storedObjectsText } from "../storage/format/block.ts";
import type { Entry, Row } from "../storage/entries.ts";
import { splitObjects } from "../storage/format/object-path.ts";
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

const NO_OBJECTS = ["null", "null", "null", "null"];

/**
 * logEntryText is JSON.stringify(toLogEntry(…)), written directly: an entry read from a block keeps its objects'
 * stored JSON text, which is spliced in instead of parsed and written again (most of the cost of an entry's JSON).
 */
export function logEntryText(env: Environment, serverMs: number, e: Entry): string {
  const stored = storedObjectsText(e);
  const [actor, target, context, metadata] =
    stored === undefined ? [e.actor, e.target, e.context, e.metadata].map((o) => JSON.stringify(o)) : stored === null ? NO_OBJECTS : splitObjects(stored);
  return (
    `{"id":"${e.id}","environment":"${env}","level":"${e.level}","action":${JSON.stringify(e.action)},"message":${JSON.stringify(e.message)},` +
    `"tags":${JSON.stringify(e.tags)},"actor":${actor},"target":${target},"context":${context},"metadata":${metadata},` +
    `"client_timestamp":"${formatMs(e.clientMs)}","server_timestamp":"${formatMsRepeated(serverMs)}"}`
  );
}

/** pageHeaders carries the cursor of the page after `rows` as X-Next-Cursor-ID / X-Next-Cursor-TS when more entries match. */
export function pageHeaders(rows: Row[], more: boolean): Record<string, string> {
  const last = rows[rows.length - 1];
  if (!more || !last) return {};
  return { "x-next-cursor-id": last.entry.id, "x-next-cursor-ts": formatMsRepeated(last.serverMs) };
}
