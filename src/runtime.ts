// runtime: the JavaScriptCore and allocator settings the server runs with. Both read them from the environment
// once, as the process starts, so they are set by what starts it: `npm start`, and the servers that tests and
// benches spawn.

/**
 * JSC collects a heap once 8 MiB have been allocated in it since the last collection (largeHeapSize). Parsing a
 * 1,000-entry bulk body allocates several MiB, so the ingest worker collected every ~40 ms: 130 collections and
 * 410 ms of pauses in 5 s of bulk ingest. At 64 MiB: 36 and 167 ms, for at most 56 MiB more garbage a thread.
 */
const LARGE_HEAP_SIZE = String(64 * 2 ** 20);

/**
 * mimalloc, Bun's allocator, hands freed pages back to the kernel soon after they empty (purge), and the next
 * allocation faults them in again, zeroed: in bulk ingest 0.27–0.31 page faults and 2.0–2.6 µs of the server's
 * kernel time an entry. Never purging (-1) keeps them for reuse: 0.08–0.09 faults and 1.5–1.6 µs. Memory then
 * stays at its high-water mark; a long delay instead (1,000 s) still left 0.21 faults an entry.
 */
const PURGE_DELAY = "-1";

export const RUNTIME_ENV: Readonly<Record<string, string>> = { BUN_JSC_largeHeapSize: LARGE_HEAP_SIZE, MIMALLOC_PURGE_DELAY: PURGE_DELAY };
