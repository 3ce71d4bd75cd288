// disk: a data directory whose disk is full. LMDB fails the commit that finds no room (ENOSPC, EDQUOT, or EIO for
// a short write); nothing of that transaction is stored and the environment stays usable, so the process answers
// 503 and goes on. Writes are always tried: once space is freed, the next one succeeds.
import { statfsSync } from "node:fs";

/** errno values LMDB reports when the disk has no room for a commit (a short write of its pages is EIO). */
const NO_ROOM = new Set([5, 28, 122]);

/** FREE_TO_RETRY is the free space on the disk after which /readyz calls a full data directory writable again. */
const FREE_TO_RETRY = 4 * 2 ** 20;

/** StorageFull is a write refused because the data directory's disk has no room left for it; nothing of it was stored. */
export class StorageFull extends Error {
  constructor(cause: unknown) {
    super("storage is full: the data directory's disk has no room left for these entries; nothing was stored. Free space on that disk and retry", {
      cause,
    });
  }
}

/**
 * commitCode is the errno of a failed lmdb-js commit: its put promises reject with an error whose `commitError` is a
 * promise rejected with LMDB's own error (by then already rejected). Handling it here also keeps that promise from
 * going unhandled, which would end the process.
 */
export async function commitCode(e: unknown): Promise<number | undefined> {
  const detail = (e as { commitError?: Promise<unknown> } | null)?.commitError;
  const cause = detail
    ? await detail.then(
        () => undefined,
        (c: unknown) => c,
      )
    : e;
  const code = (cause as { code?: unknown } | null)?.code;
  return typeof code === "number" ? code : undefined;
}

/**
 * DiskSpace tracks whether the data directory's disk refused a write for want of room. A small write may still fit in
 * pages LMDB freed inside its file, so only room on the disk, or a write at least half as large as the refused one,
 * ends it (a bulk stored after space was freed may be a little smaller than the bulk that was refused).
 */
export class DiskSpace {
  /** the size of the smallest write refused since the disk was last known to have room */
  private refusedBytes: number | undefined;
  constructor(private readonly dataDir: string) {}

  /** refused classifies a failed commit of `bytes`: a StorageFull (and the disk marked full) when it found no room, else the error itself. */
  async refused(e: unknown, bytes: number): Promise<unknown> {
    if (e instanceof StorageFull) return e;
    const code = await commitCode(e);
    if (code === undefined || !NO_ROOM.has(code)) return e;
    this.refusedBytes = Math.min(this.refusedBytes ?? bytes, bytes);
    return new StorageFull(e);
  }

  /** stored records a committed write of `bytes`: one at least half as large as a refused one shows the disk has room again. */
  stored(bytes: number): void {
    if (this.refusedBytes !== undefined && 2 * bytes >= this.refusedBytes) this.refusedBytes = undefined;
  }

  /** full tells whether writes cannot be stored: one found no room, and the disk has not had room freed since. */
  full(): boolean {
    if (this.refusedBytes === undefined) return false;
    if (this.freeBytes() >= FREE_TO_RETRY) this.refusedBytes = undefined;
    return this.refusedBytes !== undefined;
  }

  private freeBytes(): number {
    try {
      const s = statfsSync(this.dataDir);
      return s.bavail * s.bsize;
    } catch {
      return 0;
    }
  }
}

/** isCommitFailure tells whether an unhandled rejection is a failed lmdb-js commit: a put's error or its commitError detail. */
function isCommitFailure(reason: unknown): boolean {
  if (!(reason instanceof Error)) return false;
  if ((reason as { commitError?: unknown }).commitError instanceof Promise) return true;
  const code = (reason as { code?: unknown }).code;
  return typeof code === "number" && NO_ROOM.has(code) && (reason.stack ?? "").includes("lmdb");
}

/**
 * surviveFullDisk keeps a server process running when a commit finds no room. lmdb-js rejects promises of a failed
 * commit that no caller holds (its commitError detail among them); the writes that failed are answered, and what
 * storage keeps in memory (held postings, filters) is written again later. Any other unhandled rejection still ends
 * the process, as it would without this.
 */
export function surviveFullDisk(): void {
  process.on("unhandledRejection", (reason) => {
    if (isCommitFailure(reason)) return;
    console.error(reason);
    process.exit(1);
  });
}
