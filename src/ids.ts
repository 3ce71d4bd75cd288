// ids: UUIDv7 identifiers (RFC 9562) that increase strictly within this process.
// The 48-bit time field is the entry's server_timestamp, so an id alone locates its block.

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** isUuid tells whether text is a canonical lowercase UUID. */
export const isUuid = (text: string): boolean => UUID.test(text);

/** uuidTimeMs reads the millisecond timestamp of a UUIDv7. */
export const uuidTimeMs = (id: string): number => parseInt(id.slice(0, 8) + id.slice(9, 13), 16);

const COUNTER_MAX = 2 ** 42 - 1; // 12 bits rand_a + 30 high bits of rand_b, RFC 9562 method 1

/** IdGenerator hands out ids that increase strictly, with a clock that never runs backwards. */
export class IdGenerator {
  private lastMs = -1;
  private counter = 0;

  /** next returns `count` ids for one write together with their shared server timestamp. */
  next(count: number, now: number): { ms: number; ids: string[] } {
    let ms = Math.max(now, this.lastMs);
    if (ms !== this.lastMs) {
      this.counter = Math.floor(Math.random() * 2 ** 40); // random start, headroom of 2^41 ids in one ms
    } else if (this.counter + count > COUNTER_MAX) {
      ms += 1; // counter exhausted: borrow the next millisecond, as RFC 9562 allows
      this.counter = 0;
    }
    this.lastMs = ms;
    const ids = new Array<string>(count);
    const random = new Uint8Array(4 * count);
    crypto.getRandomValues(random);
    const prefix = timePrefix(ms); // the same for every id of one write
    for (let i = 0; i < count; i++) ids[i] = prefix + tail(++this.counter, random, i * 4);
    return { ms, ids };
  }
}

const shared = new IdGenerator();

/** nextIds draws from the process-wide generator; see IdGenerator.next. */
export const nextIds = (count: number, now = Date.now()) => shared.next(count, now);

/** timePrefix is "tttttttt-tttt-": the 48-bit millisecond time field. */
function timePrefix(ms: number): string {
  const hi = Math.floor(ms / 2 ** 16); // 32 bits
  return `${HEX[hi >>> 24]}${HEX[(hi >>> 16) & 255]}${HEX[(hi >>> 8) & 255]}${HEX[hi & 255]}-${HEX[(ms >>> 8) & 255]}${HEX[ms & 255]}-`;
}

/** tail is the rest of the id: version 7, the 42-bit counter across rand_a and rand_b, then 32 random bits. */
function tail(ctr: number, random: Uint8Array, at: number): string {
  const top = Math.floor(ctr / 2 ** 30); // 12 bits
  const low = ctr % 2 ** 30; // 30 bits
  return `${HEX[0x70 | (top >>> 8)]}${HEX[top & 255]}-${HEX[0x80 | (low >>> 24)]}${HEX[(low >>> 16) & 255]}-${HEX[(low >>> 8) & 255]}${HEX[low & 255]}${HEX[random[at]]}${HEX[random[at + 1]]}${HEX[random[at + 2]]}${HEX[random[at + 3]]}`;
}
