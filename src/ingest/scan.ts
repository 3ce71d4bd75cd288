// scan: one pass over a JSON body's bytes as they stream in, without recursion. It measures the nesting
// depth, so a body of deeply nested brackets is refused at its first chunk instead of reaching JSON.parse,
// and bounds each entry (the body, or each element of a body that is an array): its size, so the size rule
// (contract §4: the UTF-8 bytes of JSON.stringify of the entry) needs no stringify when the bound fits, and
// how deeply its values nest, so the depth rule needs no walk of the entry's objects when that fits.
//
// Why the bound holds: stringify of a parsed value is never longer than its text (whitespace goes, escapes
// only shorten, repeated keys drop), except numbers. One without an exponent gains at most one character,
// when rounding carries (99999999999999999999 → 100000000000000000000); one with an exponent may gain any
// number (1e20), so an entry holding one has no bound. Hence bound = bytes + digits, or none.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const ZERO = 0x30;
const NINE = 0x39;
const LOWER_E = 0x65; // (b | 0x20) folds "E" onto it
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;

/**
 * EntryBounds: per entry, a bound on its JSON size (Infinity when unknown) and how deeply its values nest (an object
 * directly in the entry is 1); and whether the body escapes a surrogate, without which no string of it holds a lone one.
 */
export interface EntryBounds {
  size: number[];
  nesting: number[];
  surrogates: boolean;
}

/** JsonBody is a checked body, unparsed, with what its scan bounds of its entries. */
export interface JsonBody {
  bytes: Uint8Array;
  bounds: EntryBounds;
}

const SURROGATE_ESCAPES = [Buffer.from("\\ud"), Buffer.from("\\uD")];

/**
 * escapesSurrogate tells whether JSON text may hold a \uD800–\uDFFF escape: valid UTF-8 encodes no surrogate, so
 * only such an escape can put a lone one in a parsed string. It may say yes for a paired one, or for an escaped backslash.
 */
export function escapesSurrogate(bytes: Uint8Array): boolean {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return SURROGATE_ESCAPES.some((needle) => b.indexOf(needle) >= 0);
}

/** JsonScan follows chunks of JSON text; `"` and `\` never occur inside UTF-8 multibyte sequences. */
export class JsonScan {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private offset = 0; // bytes fed before the current chunk
  private last = 0; // the byte that ended the last chunk
  private array = false; // the body is an array: its elements are the entries
  private start = 0; // where the current element began
  private digits = 0; // digits outside strings in the current entry
  private exponent = false; // the current entry holds a number with an exponent
  private deepest = 0; // the deepest nesting reached in the current entry, counted from the body
  private readonly bounds: Omit<EntryBounds, "surrogates"> = { size: [], nesting: [] };

  constructor(private readonly limit: number) {}

  /** feed reads one chunk and tells whether the nesting stayed within the limit. */
  feed(chunk: Uint8Array): boolean {
    let { depth, inString, digits, exponent, deepest } = this;
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
      else if (b <= NINE) {
        if (b >= ZERO) digits++;
        else if (b === COMMA && depth === 1 && this.array) {
          this.endElement(this.offset + i - 1, digits, exponent, deepest);
          digits = deepest = 0;
          exponent = false;
        }
      } else if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
        if (depth === 0 && b === OPEN_ARRAY) {
          this.array = true;
          this.start = this.offset + i;
        }
        if (++depth > limit) return false;
        if (depth > deepest) deepest = depth;
      } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
        if (--depth === 0 && this.array) this.endElement(this.offset + i - 1, digits, exponent, deepest);
      } else if ((b | 0x20) === LOWER_E) {
        const before = i >= 2 ? chunk[i - 2] : this.last; // after a digit an e is an exponent; else it is in true or false
        if (before >= ZERO && before <= NINE) exponent = true;
      }
    }
    this.depth = depth;
    this.inString = inString;
    this.digits = digits;
    this.exponent = exponent;
    this.deepest = deepest;
    this.offset += n;
    if (n > 0) this.last = chunk[n - 1];
    return true;
  }

  /** entryBounds, once the whole body is fed: for an array body those of each element, otherwise those of the body. */
  entryBounds(surrogates: boolean): EntryBounds {
    if (this.array) return { ...this.bounds, surrogates };
    return { size: [this.exponent ? Infinity : this.offset + this.digits], nesting: [Math.max(0, this.deepest - 1)], surrogates };
  }

  private endElement(end: number, digits: number, exponent: boolean, deepest: number): void {
    this.bounds.size.push(exponent ? Infinity : end - this.start + digits);
    this.bounds.nesting.push(Math.max(0, deepest - 2)); // the array is 1 and the entry 2
    this.start = end + 1;
  }
}
