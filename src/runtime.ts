// runtime: the JavaScriptCore and allocator settings the server runs with. Both read them from the environment
// once, as the process starts, so they are set by what starts it: `npm start`, and the servers that tests and
// benches spawn.

/**
 * JSC collects a heap once 8 MiB have been allocated in it since the last collection (largeHeapSize). Parsing a
 * 1,000-entry bulk body allocates several MiB, so the ingest worker collected many times a second; at 64 MiB it
 * collects a fraction as often, for at most 56 MiB more garbage a thread (bench/NOTES.md has the figures).
 */
const LARGE_HEAP_SIZE = String(64 * 2 ** 20);

/**
 * mimalloc, Bun's allocator, hands freed pages back to the kernel soon after they empty (purge), and the next
 * allocation faults them in again, zeroed: bulk ingest spent kernel time on page faults for every entry. Never
 * purging (-1) keeps them for reuse, and memory stays at its high-water mark; a long delay instead still faulted.
 */
const PURGE_DELAY = "-1";

export const RUNTIME_ENV: Readonly<Record<string, string>> = { BUN_JSC_largeHeapSize: LARGE_HEAP_SIZE, MIMALLOC_PURGE_DELAY: PURGE_DELAY };
