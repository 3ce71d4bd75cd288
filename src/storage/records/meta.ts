// meta: organizations, workspaces and API keys, in the `meta` database.
//
// Key layout:
//   ["org", id] → OrgRecord          ["orgname", textKey(name)] → org id (keys.ts: a long name is hashed)
//   ["ws", id] → WorkspaceRecord
//   ["key", id] → KeyRecord          ["hash", sha256(secret)] → key id
//   ["admin"] → { token_hash }        ["generation"] → number
// Only hashes of secrets are stored. Every write here raises the generation in its transaction, so a
// reader may keep what it read while the generation stays the same: changes made by the CLI in
// another process are still seen by the server on its next request.
import type { Database } from "lmdb";
import type { Environment, KeyType } from "../../schema.ts";
import { PerTurn } from "../../turn.ts";
import { textKey } from "../keys.ts";

export interface OrgRecord {
  id: string;
  name: string;
  created_at: string;
}
export interface WorkspaceRecord {
  id: string;
  name: string;
  org_id: string;
  plan: string;
  created_at: string;
}
export interface KeyRecord {
  id: string;
  workspace_id: string;
  name: string;
  environment: Environment;
  type: KeyType;
  scopes: string[];
  hash: string;
  hint: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

/** MetaStore keeps the records that say who may do what; secrets only as hashes. */
export class MetaStore {
  /** generation() as read in this event-loop turn (currentGeneration) */
  private readonly generationSeen = new PerTurn(() => this.generation());
  constructor(private readonly db: Database) {}

  org(id: string): OrgRecord | undefined {
    return this.db.get(["org", id]);
  }
  workspace(id: string): WorkspaceRecord | undefined {
    return this.db.get(["ws", id]);
  }
  workspaces(): WorkspaceRecord[] {
    return [...this.db.getRange({ start: ["ws"], end: ["ws", "\uffff"] }).map(({ value }) => value as WorkspaceRecord)];
  }
  key(id: string): KeyRecord | undefined {
    return this.db.get(["key", id]);
  }
  keyByHash(hash: string): KeyRecord | undefined {
    const id = this.db.get(["hash", hash]) as string | undefined;
    return id === undefined ? undefined : this.key(id);
  }
  keysOf(workspaceId: string): KeyRecord[] {
    const all = this.db.getRange({ start: ["key"], end: ["key", "\uffff"] }).map(({ value }) => value as KeyRecord);
    return [...all.filter((k) => k.workspace_id === workspaceId)];
  }
  /** generation changes with every write made through a MetaStore, in any process. */
  generation(): number {
    return (this.db.get(["generation"]) as number | undefined) ?? 0;
  }
  /**
   * currentGeneration is generation() read at most once an event-loop turn: the requests of one turn share one
   * read (a few µs each, per request), and a request in a later turn, or after a write through this store, reads it again.
   */
  currentGeneration(): number {
    return this.generationSeen.get();
  }
  adminTokenHash(): string | undefined {
    return (this.db.get(["admin"]) as { token_hash: string } | undefined)?.token_hash;
  }

  /** createWorkspace stores a workspace, creating its organization by name when new. */
  async createWorkspace(ws: Omit<WorkspaceRecord, "org_id">, orgName: string, newOrgId: string): Promise<WorkspaceRecord> {
    let record!: WorkspaceRecord;
    await this.write(() => {
      let orgId = this.db.get(["orgname", textKey(orgName)]) as string | undefined;
      if (orgId === undefined) {
        orgId = newOrgId;
        this.db.put(["org", orgId], { id: orgId, name: orgName, created_at: ws.created_at } satisfies OrgRecord);
        this.db.put(["orgname", textKey(orgName)], orgId);
      }
      record = { ...ws, org_id: orgId };
      this.db.put(["ws", ws.id], record);
      this.raiseGeneration();
    });
    return record;
  }

  async updateWorkspace(ws: WorkspaceRecord): Promise<void> {
    await this.write(() => {
      this.db.put(["ws", ws.id], ws);
      this.raiseGeneration();
    });
  }

  async putKey(key: KeyRecord, replacesHash?: string): Promise<void> {
    await this.write(() => {
      if (replacesHash) this.db.remove(["hash", replacesHash]);
      if (!key.revoked_at) this.db.put(["hash", key.hash], key.id);
      else this.db.remove(["hash", key.hash]);
      this.db.put(["key", key.id], key);
      this.raiseGeneration();
    });
  }

  /** touchKey records a use; it is not awaited by requests (a lost update costs nothing). */
  touchKey(id: string, at: string): void {
    this.write(() => {
      const k = this.db.get(["key", id]) as KeyRecord | undefined;
      if (k) this.db.put(["key", id], { ...k, last_used_at: at });
      this.raiseGeneration();
    }).catch(() => {}); // a full disk refuses it: the stamp waits for the next use
  }

  async setAdminTokenHash(hash: string): Promise<void> {
    await this.write(() => {
      this.db.put(["admin"], { token_hash: hash });
      this.raiseGeneration();
    });
  }

  /** write runs fn in a transaction; once it commits, the next currentGeneration reads the generation it raised */
  private async write<T>(fn: () => T): Promise<T> {
    const result = await this.db.transaction(fn);
    this.generationSeen.forget();
    return result;
  }

  // inside a write transaction: its read sees the latest generation, and the write lock keeps it so until commit
  private raiseGeneration(): void {
    this.db.put(["generation"], this.generation() + 1);
  }
}
