// number-column: a column of whole numbers (below 10^15 in size) as zigzag varints, each number as itself or as its
// step from the one before, whichever takes fewer bytes for the column: counters and ids step by little, codes and
// sizes do not.
import type { VarintReader } from "./varint.ts";
import { varint } from "./varint.ts";

/** Numbers are smaller than this in size, so that a step between two stays a whole number below 2^53. */
const LIMIT = 10 ** 15;

/** How says how a column's numbers are written: as zigzag varints, as zigzag varints of their steps, or as varints (none negative). */
export type How = typeof SIGNED | typeof STEPS | typeof UNSIGNED;
const SIGNED = 0;
const STEPS = 1;
const UNSIGNED = 2;
export const isHow = (v: unknown): v is How => v === SIGNED || v === STEPS || v === UNSIGNED;

/** putNumbers appends a column of numbers the way that takes fewest bytes, and tells which (the first step is from 0). */
export function putNumbers(out: number[], values: readonly number[]): How {
  let valueBytes = 0;
  let stepBytes = 0;
  let negative = false;
  for (let i = 0; i < values.length; i++) {
    negative ||= values[i] < 0;
    valueBytes += varintBytes(values[i] < 0 ? zigzag(values[i]) : values[i]);
    stepBytes += varintBytes(zigzag(values[i] - (i === 0 ? 0 : values[i - 1])));
  }
  const how = stepBytes < valueBytes ? STEPS : negative ? SIGNED : UNSIGNED;
  for (let i = 0; i < values.length; i++) varint(out, how === UNSIGNED ? values[i] : zigzag(how === STEPS && i > 0 ? values[i] - values[i - 1] : values[i]));
  return how;
}

const zigzag = (v: number): number => (v >= 0 ? 2 * v : -2 * v - 1);
const varintBytes = (v: number): number => (v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : Math.ceil(Math.log2(v + 1) / 7));

/** readNumbers reads a column of `count` numbers that putNumbers wrote; `damaged` makes the error of one out of range. */
export function readNumbers(read: VarintReader, count: number, how: How, damaged: (why: string) => Error): Float64Array {
  const out = new Float64Array(count);
  let value = 0;
  for (let r = 0; r < count; r++) {
    const z = read.next();
    const v = how === UNSIGNED ? z : z % 2 === 1 ? -(z + 1) / 2 : z / 2;
    value = how === STEPS ? value + v : v;
    if (!(value < LIMIT && value > -LIMIT)) throw damaged("a number is out of range");
    out[r] = value;
  }
  return out;
}
