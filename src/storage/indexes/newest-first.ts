// newest-first: merges sorted streams of block references into one, newest first, opening a stream only once it can
// yield the next reference (a needle's segments are read only as far as a page needs).
import { newer, type BlockRef } from "../keys.ts";

/** Source is one sorted stream of references: the newest it can yield, and how to open it. */
export interface Source {
  top: { ms: number; firstId: string };
  open(): Iterator<BlockRef>;
}

/** lazyMerge merges sources (sorted by their newest possible reference) newest first, opening each only when it can be next. */
export function* lazyMerge(sources: Source[]): Generator<BlockRef> {
  const heap: { ref: BlockRef; it: Iterator<BlockRef> }[] = [];
  const before = (i: number, j: number) => newer(heap[i].ref, heap[j].ref);
  const up = (i: number) => {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(i, parent)) return;
      [heap[i], heap[parent]] = [heap[parent], heap[i]];
      i = parent;
    }
  };
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      let m = i;
      if (l < heap.length && before(l, m)) m = l;
      if (l + 1 < heap.length && before(l + 1, m)) m = l + 1;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m], heap[i]];
      i = m;
    }
  };
  const push = (it: Iterator<BlockRef>) => {
    const first = it.next();
    if (first.done) return;
    heap.push({ ref: first.value, it });
    up(heap.length - 1);
  };
  let next = 0;
  for (;;) {
    while (next < sources.length && (heap.length === 0 || !newer(heap[0].ref, sources[next].top))) push(sources[next++].open());
    if (heap.length === 0) return;
    const top = heap[0];
    yield top.ref;
    const following = top.it.next();
    if (following.done) {
      const last = heap.pop()!;
      if (heap.length > 0) {
        heap[0] = last;
        down(0);
      }
    } else {
      top.ref = following.value;
      down(0);
    }
  }
}
