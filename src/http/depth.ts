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
    const n = chunk.length;
    let i = 0;
    if (this.escaped) {
      i = 1; // the chunk's first byte is escaped by the backslash that ended the last one
      this.escaped = false;
    }
    while (i < n) {
      if (inString) {
        // a tight loop through the string's bytes: most of a JSON body is strings
        for (;;) {
          if (i >= n) break;
          const c = chunk[i++];
          if (c === QUOTE) {
            inString = false;
            break;
          }
          if (c === BACKSLASH) {
            if (i >= n) this.escaped = true; // the escaped byte is in the next chunk
            i++;
          }
        }
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
