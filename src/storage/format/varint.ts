// varint: unsigned LEB128, the whole numbers the stored formats count with (id steps, posting groups).

/** varint appends a whole number below 2^53 as unsigned LEB128 (arithmetic: bit operators stop at 32 bits). */
export function varint(out: number[], value: number): void {
  while (value >= 0x80) {
    out.push((value % 0x80) | 0x80);
    value = Math.floor(value / 0x80);
  }
  out.push(value);
}
