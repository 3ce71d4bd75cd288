// sessions: the web explorer's sessions (contract §12) in the meta database, so that a restarted process still knows
// them and every node of a cluster does too (its meta database mirrors the shared bucket). Only hashes are kept:
//   ["session", sha256(token)] → { key: sha256(key), started: ms }      ["seen", sha256(token)] → ms of a recorded use
// A use is stored apart from its session: one recorded while another node signs the session out can then leave only a
// stray "seen" record (swept), never bring the session back.
import type { Database } from "lmdb";

/** the first element of the meta keys that hold sessions: read as they are, never cached by the meta generation */
export const SESSION_KEYS: readonly string[] = ["session", "seen"];

/** StoredSession is what the store knows of a session: its key's hash, its start and its last recorded use. */
export interface StoredSession {
  keyHash: string;
  startedMs: number;
  /** the last use recorded in the store (the start when none was) */
  seenMs: number;
}

/** SessionStore keeps the open sessions by the hash of their token. */
export class SessionStore {
  constructor(private readonly db: Database) {}

  /** get is the session of a token hash, or undefined when there is none. */
  get(id: string): StoredSession | undefined {
    const s = this.db.get(["session", id]) as { key: string; started: number } | undefined;
    if (!s) return undefined;
    const seen = this.db.get(["seen", id]) as number | undefined;
    return { keyHash: s.key, startedMs: s.started, seenMs: Math.max(seen ?? 0, s.started) };
  }

  /** open stores a new session; it resolves once committed (in a cluster: once every live node has it). */
  async open(id: string, keyHash: string, startedMs: number): Promise<void> {
    await this.db.transaction(() => {
      this.db.put(["session", id], { key: keyHash, started: startedMs });
    });
  }

  /** seen records a use of a session. */
  async seen(id: string, atMs: number): Promise<void> {
    await this.db.transaction(() => {
      this.db.put(["seen", id], atMs);
    });
  }

  /** close removes sessions and their recorded uses; it resolves once committed (in a cluster: once every live node has it). */
  async close(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.transaction(() => {
      for (const id of ids) {
        this.db.remove(["session", id]);
        this.db.remove(["seen", id]);
      }
    });
  }

  /** all lists every stored session with its id. */
  all(): (StoredSession & { id: string })[] {
    const out: (StoredSession & { id: string })[] = [];
    for (const { key } of this.db.getRange({ start: ["session"], end: ["session", "\uffff"] })) {
      const id = (key as string[])[1];
      const s = this.get(id);
      if (s) out.push({ id, ...s });
    }
    return out;
  }

  /** strays lists the ids of recorded uses whose session is gone (a use recorded while it was being closed). */
  strays(): string[] {
    const out: string[] = [];
    for (const key of this.db.getKeys({ start: ["seen"], end: ["seen", "\uffff"] })) {
      const id = (key as string[])[1];
      if (this.db.get(["session", id]) === undefined) out.push(id);
    }
    return out;
  }
}
