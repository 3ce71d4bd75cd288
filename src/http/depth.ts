// depth: the nesting depth of a JSON body, measured on its bytes as they stream in, without recursion,
// so a body of deeply nested brackets is refused at its first chunk instead of reaching JSON.parse.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;

/** DepthMeter follows chunks of JSON text; `"` and `\` never occur inside UTF-8 multibyte sequences. */
export class DepthMeter {
  private depth = 0;
  private inString = false;
  private escaped = false;

  constructor(private readonly limit: number) {}

  /** feed reads one chunk and tells whether the nesting stayed within the limit. */
  feed(chunk: Uint8Array): boolean {
    let { depth, inString } = this;
    const limit = this.limit;
    let i = 0;
    if (this.escaped) {
      i = 1; // the chunk's first byte is escaped by the backslash that ended the last one
      this.escaped = false;
    }
    while (i < chunk.length) {
      if (inString) {
        // jump to the next quote natively; it ends the string unless an odd run of backslashes precedes it
        const q = chunk.indexOf(QUOTE, i);
        if (q < 0) {
          this.escaped = trailingBackslashes(chunk, i, chunk.length) % 2 === 1;
          break;
        }
        if (trailingBackslashes(chunk, i, q) % 2 === 0) inString = false;
        i = q + 1;
        continue;
      }
      const b = chunk[i++];
      if (b === QUOTE) inString = true;
      else if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
        if (++depth > limit) return false;
      } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) depth--;
    }
    this.depth = depth;
    this.inString = inString;
    return true;
  }
}

/** trailingBackslashes counts the backslashes right before `end`, not looking before `from`. */
function trailingBackslashes(chunk: Uint8Array, from: number, end: number): number {
  let n = 0;
  for (let k = end - 1; k >= from && chunk[k] === BACKSLASH; k--) n++;
  return n;
}
