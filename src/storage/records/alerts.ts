// alerts (storage): what contract §16 keeps across restarts and kill -9, in the named database `alerts`:
//   [kind, ws, env, id] → record, kind "channel" | "rule" | "silence"
//   ["state", ws, env, ruleId, fingerprint] → StoredState (pending and firing groups only)
//   ["evaluated", ws, env, ruleId] → ms of the rule's last evaluation
//   ["history", ws, env, ruleId, atMs, id] → StoredTransition
//   ["outbox", id] → StoredNotice: a notice decided but not yet settled, written in the transaction that decided it
// An evaluation's states, transitions and notices commit together, so a restart finds either all of them or none.
// An evaluation that changed only values and times (Readings) is stored with the rest of its round, in one transaction.
import type { Database } from "lmdb";
import type { Tenant } from "../keys.ts";

export type RecordKind = "channel" | "rule" | "silence";

/** StoredState is one pending or firing group of a rule; what was announced is kept with it. */
export interface StoredState {
  fingerprint: string;
  group: Record<string, string | null> | null;
  state: "pending" | "firing" | "error";
  value: number | null;
  activeSinceMs: number;
  lastEvaluatedMs: number;
  /** when the firing notice went out (for repeat_interval), undefined before */
  notifiedMs?: number;
  /** the reason of state error */
  reason?: string;
}

/** Delivery is how one channel's notice of a transition went. */
export interface Delivery {
  channel_id: string;
  status: "delivered" | "failed" | "pending";
  attempts: number;
  error: string | null;
}

/** StoredTransition is one change of a group's state, with the deliveries of the notices it caused. */
export interface StoredTransition {
  id: string;
  atMs: number;
  ruleId: string;
  group: Record<string, string | null> | null;
  fingerprint: string;
  from: string;
  to: string;
  value: number | null;
  deliveries: Delivery[];
}

/** StoredNotice is an intent to notify one channel, kept until it is delivered or given up. */
export interface StoredNotice {
  id: string;
  ws: string;
  env: Tenant["env"];
  channelId: string;
  /** the transition whose deliveries record the outcome */
  historyKey: (string | number)[];
  /** the notice itself, built when it was decided */
  payload: NoticePayload;
  attempts: number;
  /** not before this ms (backoff) */
  dueMs: number;
  firstMs: number;
}

/** NoticePayload is what a channel gets: the alerts of one rule that changed, as Alertmanager sees them. */
export interface NoticePayload {
  status: "firing" | "resolved";
  ruleId: string;
  ruleName: string;
  alerts: Record<string, unknown>[];
  /** the group of the alert, for subjects and titles */
  group?: Record<string, string | null> | null;
  /** how often the rule is evaluated: Alertmanager is told an alert ends if not re-posted within 3 of them */
  everyMs?: number;
  /** a test notification from POST /alerts/channels/{id}/test */
  test?: boolean;
}

/** EvaluationWrite is everything one evaluation of one rule changes. */
export interface EvaluationWrite {
  ruleId: string;
  atMs: number;
  states: StoredState[];
  removed: string[];
  transitions: StoredTransition[];
  notices: StoredNotice[];
  /** the rule is being disabled or deleted: store even though it is disabled */
  retiring?: boolean;
}

/** Reading is an evaluation that changed no state: only its groups' values and times, and when the rule was evaluated. */
export interface Reading {
  t: Tenant;
  ruleId: string;
  atMs: number;
  values: { fingerprint: string; value: number | null }[];
}

const END = "\uffff";
/** MAX_HISTORY_PER_RULE bounds a rule's history: its oldest transitions go first */
export const MAX_HISTORY_PER_RULE = 1000;

/** AlertStore keeps the alert records of every workspace environment. */
export class AlertStore {
  constructor(private readonly db: Database) {}

  get<T>(kind: RecordKind, t: Tenant, id: string): T | undefined {
    return this.db.get([kind, t.ws, t.env, id]) as T | undefined;
  }

  /** list is every record of a kind of a tenant, in id order (ids are UUIDv7: creation order). */
  list<T>(kind: RecordKind, t: Tenant): T[] {
    return [...this.db.getRange({ start: [kind, t.ws, t.env], end: [kind, t.ws, t.env, END] })].map((e) => e.value as T);
  }

  count(kind: RecordKind, t: Tenant): number {
    return this.db.getKeysCount({ start: [kind, t.ws, t.env], end: [kind, t.ws, t.env, END] });
  }

  /** put stores a record; it resolves once committed (a transaction: a cluster's mirror shares what one changes). */
  async put(kind: RecordKind, t: Tenant, id: string, record: unknown): Promise<void> {
    await this.db.transaction(() => this.db.put([kind, t.ws, t.env, id], record));
  }

  /** remove deletes a record (a rule with its states); false when there was none. */
  async remove(kind: RecordKind, t: Tenant, id: string): Promise<boolean> {
    return this.db.transaction(() => {
      if (this.db.get([kind, t.ws, t.env, id]) === undefined) return false;
      this.db.remove([kind, t.ws, t.env, id]);
      if (kind === "rule") {
        for (const key of this.db.getKeys({ start: ["state", t.ws, t.env, id], end: ["state", t.ws, t.env, id, END] })) this.db.remove(key);
        this.db.remove(["evaluated", t.ws, t.env, id]);
      }
      return true;
    });
  }

  /** rules is every rule of every tenant, for the evaluator. */
  allRules<T>(): { ws: string; env: Tenant["env"]; rule: T }[] {
    return [...this.db.getRange({ start: ["rule"], end: ["rule", END] })].map(({ key, value }) => {
      const k = key as string[];
      return { ws: k[1], env: k[2] as Tenant["env"], rule: value as T };
    });
  }

  states(t: Tenant, ruleId?: string): StoredState[] {
    const start = ruleId ? ["state", t.ws, t.env, ruleId] : ["state", t.ws, t.env];
    return [...this.db.getRange({ start, end: [...start, END] })].map((e) => e.value as StoredState);
  }

  stateEntries(t: Tenant): { ruleId: string; state: StoredState }[] {
    return [...this.db.getRange({ start: ["state", t.ws, t.env], end: ["state", t.ws, t.env, END] })].map(({ key, value }) => ({
      ruleId: (key as string[])[3],
      state: value as StoredState,
    }));
  }

  lastEvaluated(t: Tenant, ruleId: string): number | undefined {
    return this.db.get(["evaluated", t.ws, t.env, ruleId]) as number | undefined;
  }

  /** commitEvaluation stores one evaluation's outcome in one transaction; it resolves once committed. */
  async commitEvaluation(t: Tenant, w: EvaluationWrite): Promise<void> {
    await this.db.transaction(() => {
      const rule = this.db.get(["rule", t.ws, t.env, w.ruleId]) as { enabled: boolean } | undefined;
      if (rule === undefined || (!rule.enabled && !w.retiring)) return; // deleted or disabled meanwhile: nothing to keep
      for (const s of w.states) this.db.put(["state", t.ws, t.env, w.ruleId, s.fingerprint], s);
      for (const f of w.removed) this.db.remove(["state", t.ws, t.env, w.ruleId, f]);
      for (const tr of w.transitions) this.db.put(["history", t.ws, t.env, tr.ruleId, tr.atMs, tr.id], tr);
      for (const n of w.notices) this.db.put(["outbox", n.id], n);
      this.db.put(["evaluated", t.ws, t.env, w.ruleId], w.atMs);
      if (w.transitions.length) this.trimHistory(t, w.ruleId);
    });
  }

  /** commitReadings stores a round's readings in one transaction: each onto its group's stored state, if it is still there. */
  async commitReadings(readings: Reading[]): Promise<void> {
    if (readings.length === 0) return;
    await this.db.transaction(() => {
      for (const { t, ruleId, atMs, values } of readings) {
        const rule = this.db.get(["rule", t.ws, t.env, ruleId]) as { enabled: boolean } | undefined;
        if (rule === undefined || !rule.enabled) continue; // deleted or disabled meanwhile: its states are gone or going
        const last = this.lastEvaluated(t, ruleId);
        if (last !== undefined && last > atMs) continue; // a later evaluation stored its own
        for (const { fingerprint, value } of values) {
          const key = ["state", t.ws, t.env, ruleId, fingerprint];
          const s = this.db.get(key) as StoredState | undefined;
          if (s) this.db.put(key, { ...s, value, lastEvaluatedMs: atMs });
        }
        this.db.put(["evaluated", t.ws, t.env, ruleId], atMs);
      }
    });
  }

  /** trimHistory drops a rule's oldest transitions past MAX_HISTORY_PER_RULE (inside a transaction). */
  private trimHistory(t: Tenant, ruleId: string): void {
    const start = ["history", t.ws, t.env, ruleId];
    const extra = this.db.getKeysCount({ start, end: [...start, END] }) - MAX_HISTORY_PER_RULE;
    if (extra > 0) for (const key of [...this.db.getKeys({ start, end: [...start, END], limit: extra })]) this.db.remove(key);
  }

  /** history lists transitions of a tenant (of one rule when given) within [fromMs, toMs), oldest first. */
  history(t: Tenant, ruleId: string | undefined, fromMs: number, toMs: number, limit: number): StoredTransition[] {
    const out: StoredTransition[] = [];
    const start = ruleId ? ["history", t.ws, t.env, ruleId] : ["history", t.ws, t.env];
    for (const { value } of this.db.getRange({ start, end: [...start, END] })) {
      const tr = value as StoredTransition;
      if (tr.atMs >= fromMs && tr.atMs < toMs) out.push(tr);
    }
    out.sort((a, b) => a.atMs - b.atMs || (a.id < b.id ? -1 : 1));
    return out.slice(-limit);
  }

  /** outbox is every notice not yet settled. */
  outbox(): StoredNotice[] {
    return [...this.db.getRange({ start: ["outbox"], end: ["outbox", END] })].map((e) => e.value as StoredNotice);
  }

  /** settle records a notice's outcome in its transition and, unless it is to be retried, drops it from the outbox. */
  async settle(n: StoredNotice, d: Delivery, retryAtMs?: number): Promise<void> {
    await this.db.transaction(() => {
      const tr = this.db.get(n.historyKey) as StoredTransition | undefined;
      if (tr) {
        const i = tr.deliveries.findIndex((x) => x.channel_id === n.channelId);
        if (i >= 0) tr.deliveries[i] = d;
        this.db.put(n.historyKey, tr);
      }
      if (retryAtMs === undefined) this.db.remove(["outbox", n.id]);
      else this.db.put(["outbox", n.id], { ...n, attempts: d.attempts, dueMs: retryAtMs });
    });
  }
}
