// raw-size: what an entry weighs as raw JSON, the measure storage is compared with (contract §15): the UTF-8 bytes of
// its JSON as GET /logs/{id} returns it (http/wire.ts logEntryText), less its environment's name, which a block
// does not hold (the tenant adds it).

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
  let tags = 2 + Math.max(0, e.tags.length - 1); // brackets and commas
  for (const tag of e.tags) tags += jsonBytes(tag);
  return (
    FIXED +
    e.level.length +
    jsonBytes(e.action) +
    (e.message === null ? 4 : jsonBytes(e.message)) +
    tags +
    (objects === null ? NO_OBJECTS : Buffer.byteLength(objects) - "[,,,]".length) +
    isoLength(e.clientMs)
  );
}

/** jsonBytes is the UTF-8 length of JSON.stringify(s): counted for printable ASCII, which most text is, else made. */
export function jsonBytes(s: string): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || c > 0x7e) return Buffer.byteLength(JSON.stringify(s));
  }
  return s.length + 2;
}

// toISOString's length: 24 within years 0000–9999, else 27 (a sign and six digits of year)
const YEAR_0 = -62_167_219_200_000;
const YEAR_10000 = 253_402_300_800_000;
const isoLength = (ms: number): number => (ms >= YEAR_0 && ms < YEAR_10000 ? 24 : 27);
