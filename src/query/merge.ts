// merge: the union of several block-reference streams, each newest first, as one stream newest first.
import { newer, type BlockRef } from "../storage/keys.ts";

/** mergeRefs k-way merges streams ordered by (ms, firstId) descending; a heap keeps it O(log k) per ref. */
export function* mergeRefs(streams: Iterable<BlockRef>[]): Generator<BlockRef> {
  if (streams.length === 1) return yield* streams[0];
  const heap: { ref: BlockRef; it: Iterator<BlockRef> }[] = [];
  const push = (node: { ref: BlockRef; it: Iterator<BlockRef> }) => {
    heap.push(node);
    for (let i = heap.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (!newer(heap[i].ref, heap[parent].ref)) break;
      [heap[i], heap[parent]] = [heap[parent], heap[i]];
      i = parent;
    }
  };
  const pop = () => {
    const top = heap[0];
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && newer(heap[l].ref, heap[m].ref)) m = l;
        if (r < heap.length && newer(heap[r].ref, heap[m].ref)) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m], heap[i]];
        i = m;
      }
    }
    return top;
  };
  for (const s of streams) {
    const it = s[Symbol.iterator]();
    const first = it.next();
    if (!first.done) push({ ref: first.value, it });
  }
  try {
    while (heap.length > 0) {
      const node = pop();
      yield node.ref;
      const next = node.it.next();
      if (!next.done) push({ ref: next.value, it: node.it });
    }
  } finally {
    for (const { it } of heap) it.return?.(); // close the LMDB cursors of streams left unread
  }
}
