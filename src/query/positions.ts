// positions: lists of a block's entry positions as indexes name them, kept ascending and distinct, so a read can walk
// a block's entries newest first and merge what two references name without building sets.

/** within is the ascending positions both a reference and the narrowing allow; null: every entry. */
export function within(positions: readonly number[] | null, narrowed: readonly number[] | undefined): readonly number[] | null {
  if (positions === null) return narrowed ?? null;
  if (narrowed === undefined) return positions;
  const out: number[] = [];
  for (let i = 0, j = 0; i < positions.length && j < narrowed.length; ) {
    if (positions[i] === narrowed[j]) {
      out.push(positions[i]);
      i++;
      j++;
    } else if (positions[i] < narrowed[j]) i++;
    else j++;
  }
  return out;
}

/** merged is the ascending union of two ascending position lists, each position once. */
export function merged(a: readonly number[], b: readonly number[]): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const next = j >= b.length || (i < a.length && a[i] <= b[j]) ? a[i] : b[j];
    if (out.length === 0 || out[out.length - 1] !== next) out.push(next);
    if (i < a.length && a[i] === next) i++;
    if (j < b.length && b[j] === next) j++;
  }
  return out;
}

/** ascending is a reference's positions as an ascending list of distinct positions (indexes list them so; this makes sure). */
export function ascending(positions: readonly number[]): readonly number[] {
  for (let k = 1; k < positions.length; k++) if (positions[k] <= positions[k - 1]) return [...new Set(positions)].sort((a, b) => a - b);
  return positions;
}
