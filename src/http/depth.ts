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
    let { depth, inString, escaped } = this;
    const limit = this.limit;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      if (inString) {
        if (escaped) escaped = false;
        else if (b === BACKSLASH) escaped = true;
        else if (b === QUOTE) inString = false;
      } else if (b === QUOTE) inString = true;
      else if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
        if (++depth > limit) return false;
      } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) depth--;
    }
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
    return true;
  }
}
