// varint: unsigned LEB128, the whole numbers the stored formats count with (id steps, posting groups, client time
// steps, leaf lengths).

/** varint appends a whole number below 2^53 as unsigned LEB128 (arithmetic: bit operators stop at 32 bits). */
export function varint(out: number[], value: number): void {
  while (value >= 0x80) {
    out.push((value % 0x80) | 0x80);
    value = Math.floor(value / 0x80);
  }
  out.push(value);
}

/** VarintReader reads whole numbers written by varint one after another; `damaged` says what ran out, for the error. */
export class VarintReader {
  at = 0;
  constructor(
    private readonly bytes: Uint8Array,
    private readonly damaged: string,
  ) {}

  next(): number {
    const first = this.bytes[this.at];
    if (first < 0x80) {
      this.at++; // one byte, as most are: past the end, `first` is undefined and the loop below says so
      return first;
    }
    let value = 0;
    for (let scale = 1; ; scale *= 0x80) {
      if (this.at >= this.bytes.length) throw new Error(`${this.damaged} ends early: the data directory is damaged; restore it from a backup`);
      const b = this.bytes[this.at++];
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value;
    }
  }
}
