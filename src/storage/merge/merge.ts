// merge: rewrites runs of a tenant's small blocks into parts (part.ts) in the background, so entries written one
// request at a time end up stored as densely as a bulk write's. A merge reads a run of blocks, has its worker thread
// encode the part, then in one transaction checks that every block of the run is still there, puts the part and turns
// each block's value into its pointer: a crash leaves the blocks or the part, never both, never neither. Keys and
// indexes stay as they were, so every read answers as before.
import { Worker } from "node:worker_threads";
import type { Database } from "lmdb";
import type { Environment } from "../../schema.ts";
import { Block } from "../format/block.ts";
import type { Tenant } from "../keys.ts";
import { FRONTIER_MS, encodePointer, pointerOf } from "../format/part.ts";
import type { MergeReply, MergeRequest } from "./merge-worker.ts";
import type { StatsStore } from "../stats.ts";
import type { BoundsStore, ClientBounds } from "../indexes/bounds.ts";

/** Blocks of fewer entries than this are merged; a larger block compresses well as it is. */
export const MERGE_SMALL = 256;
/** A part closes once its blocks hold this many entries. */
export const PART_ENTRIES = 4096;

/**
 * MergePace says which blocks are merged: those older than ageMs, and a run short of a part once its newest is older
 * than idleMs; and how long a merged filter segment's sources stay stored (retireMs, needle-index.ts).
 */
export interface MergePace {
  ageMs: number;
  idleMs: number;
  retireMs?: number;
}
export const DEFAULT_PACE: MergePace = { ageMs: 10_000, idleMs: 60_000 };
/** How often the background merge looks for runs. */
const PASS_MS = 2_000;
/** Blocks passed over (large or merged already) in one look before it lets the event loop run. */
const PASSED_MAX = 256;
/** Large blocks known by their commit at most: beyond, a look reads a block to learn its size. */
const KNOWN_LARGE_MAX = 100_000;

// run from source, the worker is the file beside this one; in the compiled executable (scripts/build.ts)
// it is bundled as another entrypoint, at storage/merge/merge-worker.js beside the program
const WORKER = import.meta.url.includes("$bunfs") ? new URL("./storage/merge/merge-worker.js", import.meta.url) : new URL("./merge-worker.ts", import.meta.url);

/** RunBlock is one block of a run: its key, its stored value and its entry count. */
interface RunBlock {
  ms: number;
  firstId: string;
  value: Uint8Array;
  size: number;
}

type Key = [ms: number, firstId: string];
/** Encoded is a part as the worker made it: its value and its entries' client bounds. */
type Encoded = { part: Uint8Array; bounds: ClientBounds };
/** the smallest block key after k */
const after = (k: Key): Key => [k[0], `${k[1]}\u0000`];

/** Merger merges the blocks of an entry store's tenants into parts. */
export class Merger {
  private readonly frontiers = new Map<string, Key | null>();
  /** large blocks committed since the merge started, by name, until a look passes them: lmdb-js copies a whole value to read its size */
  private readonly knownLarge = new Set<string>();
  private worker: Worker | undefined;
  private readonly waiting = new Map<number, { resolve: (part: Encoded) => void; reject: (e: unknown) => void }>();
  private calls = 0;
  private timer: Timer | undefined;
  private pass: Promise<void> | undefined;
  private stopping = false;

  constructor(
    private readonly entries: Database,
    private readonly parts: Database,
    private readonly stats: StatsStore,
    private readonly bounds: BoundsStore,
    private readonly clock: () => number = Date.now,
  ) {}

  /** start merges in the background, a pass every few seconds, until stop. */
  start(pace: MergePace = DEFAULT_PACE): void {
    this.timer ??= setInterval(() => {
      this.pass ??= this.mergeAll(pace)
        .then(() => {})
        .catch((e) => console.error(JSON.stringify({ level: "error", msg: "merge failed", error: String(e) })))
        .finally(() => (this.pass = undefined));
    }, PASS_MS);
    this.timer.unref();
  }

  /** committed learns a new block's size from its commit, so that a look passes over a large one without reading it. */
  committed(ws: string, env: Environment, ms: number, firstId: string, size: number): void {
    if (this.timer && size >= MERGE_SMALL && this.knownLarge.size < KNOWN_LARGE_MAX) this.knownLarge.add(`${ws}\u0000${env}\u0000${ms}\u0000${firstId}`);
  }

  /** stop ends the background merge once a merge under way has committed, and ends the worker thread. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    this.stopping = true; // a pass under way ends after the part it is making
    await this.pass;
    this.stopping = false;
    await this.worker?.terminate();
    this.worker = undefined;
  }

  /** mergeAll merges every tenant's runs once; a pause after each part, as long as the part took, leaves the main thread to the requests. */
  async mergeAll(pace: MergePace = DEFAULT_PACE): Promise<number> {
    let made = 0;
    for (const { ws, env } of this.stats.all())
      for (let began = performance.now(); !this.stopping && (await this.mergeNext({ ws, env }, pace)); began = performance.now()) {
        made++;
        await Bun.sleep(Math.max(1, performance.now() - began));
      }
    return made;
  }

  /** mergeTenant merges a tenant's runs until none is left; it returns how many parts it made. */
  async mergeTenant(tenant: Tenant, pace: MergePace = DEFAULT_PACE): Promise<number> {
    let made = 0;
    while (await this.mergeNext(tenant, pace)) made++;
    return made;
  }

  /** mergeNext merges the tenant's next run, if one is due; false when none is. */
  async mergeNext(tenant: Tenant, pace: MergePace): Promise<boolean> {
    let found = this.nextRun(tenant, pace);
    for (; found === "later"; found = this.nextRun(tenant, pace)) await Bun.sleep(0);
    if (!found) {
      await this.keepFrontier(tenant);
      return false;
    }
    const part = await this.encode(found.run);
    if (!(await this.commit(tenant, found.run, part, found.next))) this.frontiers.delete(`${tenant.ws}\u0000${tenant.env}`); // retention took some of the run: look again from what is stored
    return true;
  }

  /** nextRun finds the tenant's next run of small blocks due for a merge, from its frontier on; "later" when it passed over many blocks and has looked no further. */
  private nextRun({ ws, env }: Tenant, pace: MergePace): { run: RunBlock[]; next: Key } | "later" | undefined {
    const name = `${ws}\u0000${env}`;
    const now = this.clock();
    const from = this.frontierOf(ws, env);
    let run: RunBlock[] = [];
    let entries = 0;
    let passed = 0;
    const range = { start: from ? [ws, env, ...from] : [ws, env, 0], end: [ws, env, now - pace.ageMs], snapshot: false };
    for (const key of this.entries.getKeys(range)) {
      const [, , ms, firstId] = key as [string, Environment, number, string];
      let peek: Uint8Array | undefined;
      let size = MERGE_SMALL; // large, as its commit said: not read
      if (!this.knownLarge.delete(`${name}\u0000${ms}\u0000${firstId}`)) {
        // read into lmdb-js's reused buffer: only a block taken into the run is copied out
        peek = this.entries.getBinaryFast(key as [string, Environment, number, string]);
        if (peek === undefined) continue; // retention took it meanwhile
        size = pointerOf(peek) ? -1 : Block.sizeOf(peek);
      }
      if (size < 0 || size >= MERGE_SMALL) {
        if (run.length >= 2) return { run, next: [ms, firstId] };
        run = [];
        entries = 0;
        this.frontiers.set(name, after([ms, firstId])); // nothing before it is left to merge
        if (++passed === PASSED_MAX) return "later";
        continue;
      }
      run.push({ ms, firstId, value: Uint8Array.prototype.slice.call(peek!, 0, peek!.length), size });
      entries += size;
      if (entries >= PART_ENTRIES) return { run, next: after([ms, firstId]) };
    }
    const last = run[run.length - 1];
    if (run.length >= 2 && last.ms < now - pace.idleMs) return { run, next: after([last.ms, last.firstId]) };
    if (run.length > 0) this.frontiers.set(name, [run[0].ms, run[0].firstId]);
    return undefined;
  }

  /** keepFrontier stores how far a look passed over blocks no merge takes, so that the next start does not read them again. */
  private async keepFrontier({ ws, env }: Tenant): Promise<void> {
    const f = this.frontiers.get(`${ws}\u0000${env}`);
    const stored = this.parts.get([ws, env, FRONTIER_MS]) as Uint8Array | undefined;
    const was = stored && decodeFrontier(stored);
    if (f && (!was || f[0] !== was[0] || f[1] !== was[1])) await this.parts.put([ws, env, FRONTIER_MS], encodeFrontier(f)).catch(() => {}); // unstored, it is only looked for again
  }

  private frontierOf(ws: string, env: Environment): Key | null {
    const name = `${ws}\u0000${env}`;
    let f = this.frontiers.get(name);
    if (f === undefined) {
      const stored = this.parts.get([ws, env, FRONTIER_MS]) as Uint8Array | undefined;
      this.frontiers.set(name, (f = stored ? decodeFrontier(stored) : null));
    }
    return f;
  }

  /** commit stores the part and the pointers in one transaction, if every block of the run is still stored as it was read. */
  private async commit({ ws, env }: Tenant, run: RunBlock[], { part, bounds }: Encoded, next: Key): Promise<boolean> {
    const first = run[0];
    const last = run[run.length - 1];
    let bytes = part.length;
    let counted = false;
    const done = await this.entries
      .transaction(() => {
        for (const b of run) {
          const now = this.entries.getBinaryFast([ws, env, b.ms, b.firstId]);
          if (now === undefined || now.length !== b.value.length || pointerOf(now)) return false;
        }
        this.parts.putSync([ws, env, first.ms, first.firstId], part);
        // out and in again: values shrunk in place leave their pages as many as before (LMDB merges pages only under a quarter full)
        for (const b of run) {
          this.entries.removeSync([ws, env, b.ms, b.firstId]);
          this.bounds.removeSync(ws, env, b.ms, b.firstId);
        }
        this.bounds.putPartSync(ws, env, first, last, bounds);
        for (let k = 0, start = 0; k < run.length; start += run[k].size, k++) {
          const pointer = encodePointer({ start, size: run[k].size, last: k === run.length - 1 });
          this.entries.putSync([ws, env, run[k].ms, run[k].firstId], pointer);
          bytes += pointer.length - run[k].value.length;
        }
        this.parts.putSync([ws, env, FRONTIER_MS], encodeFrontier(next));
        this.stats.add(ws, env, 0, 0, bytes);
        counted = true;
        this.stats.putSync(ws, env);
        return true;
      })
      .catch((e) => {
        if (counted) this.stats.add(ws, env, 0, 0, -bytes); // nothing was merged
        throw e;
      });
    if (done) this.frontiers.set(`${ws}\u0000${env}`, next);
    return done;
  }

  /** encode has the worker thread make the part of a run. */
  private encode(run: RunBlock[]): Promise<Encoded> {
    const worker = this.startWorker();
    const call = ++this.calls;
    if (this.waiting.size === 0) worker.ref();
    const request: MergeRequest = { call, members: run.map((b) => ({ ms: b.ms, value: b.value })) };
    return new Promise((resolve, reject) => {
      this.waiting.set(call, { resolve, reject });
      worker.postMessage(request);
    });
  }

  private startWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = (this.worker = new Worker(WORKER));
    worker.unref();
    worker.on("message", (r: MergeReply) => {
      const w = this.waiting.get(r.call);
      this.waiting.delete(r.call);
      if (this.waiting.size === 0) worker.unref();
      if ("part" in r) w?.resolve(r);
      else w?.reject(new Error(`merge worker: ${r.error}`));
    });
    worker.on("error", (e) => {
      // a worker that died answers nothing more: fail what it held and start a fresh one next time
      this.worker = undefined;
      for (const w of this.waiting.values()) w.reject(e);
      this.waiting.clear();
    });
    return worker;
  }
}

/** encodeFrontier stores a block key as a float64 millisecond and the id's UTF-8. */
function encodeFrontier([ms, firstId]: Key): Uint8Array {
  const id = Buffer.from(firstId, "utf8");
  const out = new Uint8Array(8 + id.length);
  new DataView(out.buffer).setFloat64(0, ms);
  out.set(id, 8);
  return out;
}

function decodeFrontier(bytes: Uint8Array): Key {
  return [
    new DataView(bytes.buffer, bytes.byteOffset, bytes.length).getFloat64(0),
    Buffer.from(bytes.buffer, bytes.byteOffset + 8, bytes.length - 8).toString("utf8"),
  ];
}
