// runtime: the JavaScriptCore settings the server runs with. JSC reads them from the environment once, as the
// process starts, so they are set by what starts it: `npm start`, and the servers that tests and benches spawn.

/**
 * JSC collects a heap once 8 MiB have been allocated in it since the last collection (largeHeapSize). Parsing a
 * 1,000-entry bulk body allocates several MiB, so the ingest worker collected every ~40 ms: 130 collections and
 * 410 ms of pauses in 5 s of bulk ingest. At 64 MiB: 36 and 167 ms, for at most 56 MiB more garbage a thread.
 */
export const JSC_ENV: Readonly<Record<string, string>> = { BUN_JSC_largeHeapSize: String(64 * 2 ** 20) };
