// resident: keeps the LMDB files' pages that this process has read from piling up in its resident memory.
//
// LMDB maps its whole file, and a page read once stays mapped in the process until the kernel needs the memory: at
// 10M entries that was 550 MiB of RSS, growing with the data, though the page cache holds those pages anyway. Once
// the file pages mapped in pass a budget, madvise(MADV_DONTNEED) drops every LMDB mapping's pages from this process.
// For a shared file mapping that loses nothing: the pages stay in the page cache (dirty ones are marked so first), and
// the next read maps them back with a minor fault. LMDB maps its file shared and, without MDB_WRITEMAP, read-only.
import { dlopen, FFIType } from "bun:ffi";
import { readFileSync } from "node:fs";

const MADV_DONTNEED = 4;
const PAGE = 4096;
/** File-backed resident memory (the runtime's own code included, about 40 MiB) above which the maps are released. */
const BUDGET_BYTES = 160 * 2 ** 20;
const CHECK_MS = 1000;

type Madvise = (address: bigint, length: bigint, advice: number) => number;

let madvise: Madvise | null | undefined; // null: not on this system (no glibc, no /proc); then nothing is released

function loadMadvise(): Madvise | null {
  try {
    const libc = dlopen("libc.so.6", { madvise: { args: [FFIType.u64, FFIType.u64, FFIType.i32], returns: FFIType.i32 } });
    return libc.symbols.madvise as Madvise;
  } catch {
    return null;
  }
}

/** fileResidentBytes is this process's resident memory backed by files (statm's third field), or 0 without /proc. */
export function fileResidentBytes(): number {
  try {
    return Number(readFileSync("/proc/self/statm", "latin1").split(" ")[2]) * PAGE;
  } catch {
    return 0;
  }
}

/**
 * releaseMappedPages drops the pages of every shared mapping of a file ending in `suffix` (LMDB's data files) from
 * this process's resident memory, and tells how many mappings it released (0 where the system has no madvise).
 */
export function releaseMappedPages(suffix = ".mdb"): number {
  madvise ??= loadMadvise();
  if (madvise === null) return 0;
  let maps: string;
  try {
    maps = readFileSync("/proc/self/maps", "latin1");
  } catch {
    return 0;
  }
  let released = 0;
  for (const line of maps.split("\n")) {
    // "start-end perms offset dev inode path": only shared (s) mappings, so no private copy is ever thrown away
    const fields = line.split(/\s+/);
    if (fields.length < 6 || fields[1][3] !== "s" || !fields[5].endsWith(suffix)) continue;
    const [start, end] = fields[0].split("-").map((hex) => BigInt(`0x${hex}`));
    if (madvise(start, end - start, MADV_DONTNEED) === 0) released++;
  }
  return released;
}

/** releaseOverBudget releases the LMDB maps' pages when the file pages mapped in pass `budget`, and tells whether it did. */
export function releaseOverBudget(budget = BUDGET_BYTES): boolean {
  return fileResidentBytes() > budget && releaseMappedPages() > 0;
}

let checking = false;

/** keepMappedPagesBounded checks the file pages mapped in once a second and releases them past the budget (one timer a process). */
export function keepMappedPagesBounded(): void {
  if (checking) return;
  checking = true;
  setInterval(() => releaseOverBudget(), CHECK_MS).unref();
}
