// ids: UUIDv7 identifiers (RFC 9562) that increase strictly within this process.
// The 48-bit time field is the entry's server_timestamp, so an id alone locates its block.

const HEX_DIGITS = new TextEncoder().encode("0123456789abcdef");
const ID_CHARS = 36;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** isUuid tells whether text is a canonical lowercase UUID. */
export const isUuid = (text: string): boolean => UUID.test(text);

/** uuidTimeMs reads the millisecond timestamp of a UUIDv7. */
export const uuidTimeMs = (id: string): number => parseInt(id.slice(0, 8) + id.slice(9, 13), 16);

/**
 * ownCopy returns an id as a string of its own. A write's ids are slices of one joined string (IdGenerator.drawn), and
 * a slice keeps the whole string alive: a block's first id kept in an index would keep the 36 KB of its write's ids.
 */
export const ownCopy = (id: string): string => Buffer.from(id, "latin1").toString("latin1");

const COUNTER_MAX = 2 ** 42 - 1; // 12 bits rand_a + 30 high bits of rand_b, RFC 9562 method 1

/**
 * IdGenerator hands out ids that increase strictly, with a clock that never runs backwards. The 32 random bits of an
 * id are drawn once a millisecond, with the counter's random start: ids of one millisecond already differ by their
 * counter, and bits drawn per id are 4 bytes an entry that no store can compress.
 */
export class IdGenerator {
  private lastMs = -1;
  private counter = 0;
  private random = new Uint8Array(4);

  /**
   * above re-keys the ids of one write just above `after`: of its millisecond while its counter has room, else of
   * the next one; each id keeps its own random bits. Deterministic, so every cluster copy re-keys a write that
   * another front's overtook alike, and the front that sent it computes the same ids.
   */
  static above(after: string, ids: string[]): { ms: number; ids: string[] } {
    const g = new IdGenerator();
    let ms = uuidTimeMs(after);
    g.counter = counterOf(after);
    if (g.counter + ids.length > COUNTER_MAX) {
      ms += 1;
      g.counter = 0;
    }
    const random = new Uint8Array(4 * ids.length);
    for (let i = 0; i < ids.length; i++) for (let k = 0; k < 4; k++) random[4 * i + k] = parseInt(ids[i].slice(28 + 2 * k, 30 + 2 * k), 16);
    return g.drawn(ids.length, ms, random, 4);
  }

  /** next returns `count` ids for one write together with their shared server timestamp. */
  next(count: number, now: number): { ms: number; ids: string[] } {
    let ms = Math.max(now, this.lastMs);
    if (ms !== this.lastMs) {
      this.counter = Math.floor(Math.random() * 2 ** 40); // random start, headroom of 2^41 ids in one ms
      this.random = crypto.getRandomValues(new Uint8Array(4));
    } else if (this.counter + count > COUNTER_MAX) {
      ms += 1; // counter exhausted: borrow the next millisecond, as RFC 9562 allows
      this.counter = 0;
      this.random = crypto.getRandomValues(new Uint8Array(4));
    }
    this.lastMs = ms;
    return this.drawn(count, ms, this.random, 0);
  }

  /** drawn writes `count` ids of millisecond `ms` from the counter on, id i with the 4 random bytes at `random[i * stride]`. */
  private drawn(count: number, ms: number, random: Uint8Array, stride: number): { ms: number; ids: string[] } {
    // one ASCII buffer read as one flat string, each id a slice of it: strings built piece by piece are
    // ropes here, which JSON.stringify and join must flatten one by one (over twice the cost for 1,000 ids)
    const out = Buffer.alloc(ID_CHARS * count); // a Buffer decodes itself, without the copy Buffer.from(u8.buffer) makes on every write
    writePrefix(out, ms);
    for (let i = 0, at = 0; i < count; i++, at += ID_CHARS) {
      if (at > 0) out.copyWithin(at, 0, PREFIX_CHARS); // every id of one write shares its time field
      writeTail(out, at, ++this.counter, random, i * stride);
    }
    const joined = out.toString("latin1");
    const ids = new Array<string>(count);
    for (let i = 0; i < count; i++) ids[i] = joined.slice(i * ID_CHARS, (i + 1) * ID_CHARS);
    return { ms, ids };
  }
}

/** counterOf reads the 42-bit counter of an id of IdGenerator (writeTail's layout). */
function counterOf(id: string): number {
  const top = parseInt(id.slice(15, 18), 16);
  const low = (parseInt(id.slice(19, 21), 16) & 0x3f) * 2 ** 24 + parseInt(id.slice(21, 23), 16) * 2 ** 16 + parseInt(id.slice(24, 28), 16);
  return top * 2 ** 30 + low;
}

/** hex writes a byte as two lowercase hex digits. */
function hex(out: Uint8Array, at: number, byte: number): void {
  out[at] = HEX_DIGITS[byte >>> 4];
  out[at + 1] = HEX_DIGITS[byte & 15];
}

const DASH = 0x2d;

const PREFIX_CHARS = 14;

/** writePrefix writes "tttttttt-tttt-", the 48-bit millisecond time field, at the start of out. */
function writePrefix(out: Uint8Array, ms: number): void {
  const hi = Math.floor(ms / 2 ** 16); // 32 bits
  hex(out, 0, hi >>> 24);
  hex(out, 2, (hi >>> 16) & 255);
  hex(out, 4, (hi >>> 8) & 255);
  hex(out, 6, hi & 255);
  out[8] = DASH;
  hex(out, 9, (ms >>> 8) & 255);
  hex(out, 11, ms & 255);
  out[13] = DASH;
}

/** writeTail writes the rest of the id at `at`: version 7, the 42-bit counter across rand_a and rand_b, then 32 random bits. */
function writeTail(out: Uint8Array, at: number, ctr: number, random: Uint8Array, r: number): void {
  const top = Math.floor(ctr / 2 ** 30); // 12 bits
  const low = ctr % 2 ** 30; // 30 bits
  hex(out, at + 14, 0x70 | (top >>> 8));
  hex(out, at + 16, top & 255);
  out[at + 18] = DASH;
  hex(out, at + 19, 0x80 | (low >>> 24));
  hex(out, at + 21, (low >>> 16) & 255);
  out[at + 23] = DASH;
  hex(out, at + 24, (low >>> 8) & 255);
  hex(out, at + 26, low & 255);
  for (let k = 0; k < 4; k++) hex(out, at + 28 + 2 * k, random[r + k]);
}
