// states: how one evaluation moves each (rule, group) along inactive → pending → firing → inactive (contract §16),
// and which of those moves are announced. Pure: live evaluation and the preview share it.
import type { StoredState, StoredTransition } from "../storage/records/alerts.ts";
import type { Evaluation, Group, GroupValue } from "./evaluate.ts";
import { durationMs, holds, type Rule } from "./rules.ts";

/** Announcement is a notice an evaluation decided: a firing (first or repeated) or a resolve, of one group. */
export interface Announcement {
  status: "firing" | "resolved";
  transition: StoredTransition;
  state: StoredState;
  samples: GroupValue["samples"];
}

export interface Decision {
  states: StoredState[];
  removed: string[];
  transitions: StoredTransition[];
  announcements: Announcement[];
}

const ERROR_FINGERPRINT = "error";

/** decide applies one evaluation to the previous states; `silenced` tells whether a group's notices are muted now. */
export function decide(rule: Rule, previous: StoredState[], ev: Evaluation, atMs: number, silenced: (group: Group) => boolean): Decision {
  const d: Decision = { states: [], removed: [], transitions: [], announcements: [] };
  const before = new Map(previous.map((s) => [s.fingerprint, s]));
  const move = (s: StoredState, from: string, to: string, value: number | null, group: Group) => {
    const t: StoredTransition = { id: Bun.randomUUIDv7(), atMs, ruleId: rule.id, group, fingerprint: s.fingerprint, from, to, value, deliveries: [] };
    d.transitions.push(t);
    return t;
  };
  if (!ev.ok) {
    const prev = before.get(ERROR_FINGERPRINT);
    const s: StoredState = {
      fingerprint: ERROR_FINGERPRINT,
      group: null,
      state: "error",
      value: null,
      activeSinceMs: prev?.activeSinceMs ?? atMs,
      lastEvaluatedMs: atMs,
      reason: ev.reason,
    };
    if (!prev) move(s, "inactive", "error", null, null);
    d.states.push(s);
    return d; // the groups keep their states until an evaluation succeeds again
  }
  if (before.has(ERROR_FINGERPRINT)) {
    d.removed.push(ERROR_FINGERPRINT);
    move(before.get(ERROR_FINGERPRINT)!, "error", "inactive", null, null);
    before.delete(ERROR_FINGERPRINT);
  }
  const forMs = durationMs(rule.for)!;
  const repeatMs = durationMs(rule.repeat_interval)!;
  const absent = (s: StoredState): GroupValue => ({
    group: s.group,
    fingerprint: s.fingerprint,
    value: rule.aggregate.fn.startsWith("count") ? 0 : null,
    samples: [],
  });
  const all = [...ev.groups, ...[...before.values()].filter((s) => !ev.groups.some((g) => g.fingerprint === s.fingerprint)).map(absent)];
  for (const g of all) {
    const prev = before.get(g.fingerprint);
    const on = g.value !== null && holds(rule.condition.op, g.value, rule.condition.threshold);
    if (!on) {
      if (!prev) continue;
      d.removed.push(g.fingerprint);
      const t = move(prev, prev.state, "inactive", g.value, g.group);
      if (prev.state === "firing" && prev.notifiedMs !== undefined && rule.notify_resolved)
        d.announcements.push({ status: "resolved", transition: t, state: { ...prev, value: g.value, lastEvaluatedMs: atMs }, samples: g.samples });
      continue;
    }
    const since = prev?.activeSinceMs ?? atMs;
    const firing = atMs - since >= forMs;
    const s: StoredState = {
      ...prev,
      fingerprint: g.fingerprint,
      group: g.group,
      state: firing ? "firing" : "pending",
      value: g.value,
      activeSinceMs: since,
      lastEvaluatedMs: atMs,
    };
    d.states.push(s);
    const from = prev?.state ?? "inactive";
    const t = from !== s.state ? move(s, from, s.state, g.value, g.group) : undefined;
    if (!firing) continue;
    const due = s.notifiedMs === undefined || atMs - s.notifiedMs >= repeatMs;
    if (due && !silenced(g.group)) {
      s.notifiedMs = atMs;
      d.announcements.push({ status: "firing", transition: t ?? move(s, "firing", "firing", g.value, g.group), state: s, samples: g.samples });
    }
  }
  return d;
}

/** retireAll moves every group of a rule that stops (disabled, deleted) to inactive; a firing one announced is resolved. */
export function retireAll(rule: Rule, previous: StoredState[], atMs: number): Decision {
  const d: Decision = { states: [], removed: [], transitions: [], announcements: [] };
  for (const s of previous) {
    d.removed.push(s.fingerprint);
    const t: StoredTransition = {
      id: Bun.randomUUIDv7(),
      atMs,
      ruleId: rule.id,
      group: s.group,
      fingerprint: s.fingerprint,
      from: s.state,
      to: "inactive",
      value: null,
      deliveries: [],
    };
    d.transitions.push(t);
    if (s.state === "firing" && s.notifiedMs !== undefined && rule.notify_resolved)
      d.announcements.push({ status: "resolved", transition: t, state: s, samples: [] });
  }
  return d;
}
