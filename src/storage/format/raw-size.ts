// raw-size: what an entry weighs as raw JSON, the measure storage is compared with (contract §15): the UTF-8 bytes of
// its JSON as GET /logs/{id} returns it (http/wire.ts logEntryText), less its environment's name, which a block
// does not hold (the tenant adds it).
import { formatMs } from "../../time.ts";

/** Sized is what of an entry its raw size depends on (block.ts Entry has it all). */
interface Sized {
  level: string;
  action: string;
  message: string | null;
  tags: readonly string[];
  clientMs: number;
}

// {"id":"…","environment":"","level":"","action":,"message":,"tags":,"actor":,"target":,"context":,"metadata":,
// "client_timestamp":"","server_timestamp":"…"}: the keys and punctuation, a 36-character id and a 24-character server time
const FIXED =
  Buffer.byteLength(
    '{"id":"","environment":"","level":"","action":,"message":,"tags":,"actor":,"target":,"context":,"metadata":,"client_timestamp":"","server_timestamp":""}',
  ) +
  36 +
  24;
const NO_OBJECTS = 4 * "null".length;

/** rawSize is entry e's raw JSON in bytes without its environment's name; `objects` is its stored objects text (null: none). */
export function rawSize(e: Sized, objects: string | null): number {
  return (
    FIXED +
    e.level.length +
    Buffer.byteLength(JSON.stringify(e.action)) +
    Buffer.byteLength(JSON.stringify(e.message)) +
    Buffer.byteLength(JSON.stringify(e.tags)) +
    (objects === null ? NO_OBJECTS : Buffer.byteLength(objects) - "[,,,]".length) +
    formatMs(e.clientMs).length
  );
}
