// evaluator: evaluates every enabled rule at each t = k·every (epoch-aligned) and stores what changed, with the
// notices it decided, in one transaction (contract §16). An evaluation that changed no state (only values and times,
// which no notice depends on) is stored with others of its round, a few short transactions a round, so writes wait
// behind neither a commit a rule nor one long callback. Evaluations work in the round's slices of the event loop, and
// let writes under way go first (pace.ts), so a write waits for one slice at most. A rule that missed instants (the server was down) is evaluated once, at the latest one.
import type { ReadScope } from "../query/page.ts";
import { PacedSlice } from "../query/slice.ts";
import type { AlertStore, NoticePayload, Reading, StoredNotice, StoredState, StoredTransition } from "../storage/records/alerts.ts";
import type { Channel } from "./channels.ts";
import type { Tenant } from "../storage/keys.ts";
import type { EntryStore } from "../storage/entries.ts";
import { type Evaluation, evaluateRule, type Group, windowAt } from "./evaluate.ts";
import type { Window } from "../query/explore-request.ts";
import { alertOf } from "./notices.ts";
import { durationMs, type Rule } from "./rules.ts";
import { isSilenced, type Silence } from "./silences.ts";
import { type Announcement, decide, retireAll } from "./states.ts";
import { collectSamples } from "./samples.ts";
import { EVERYWHERE, type Placement } from "./placement.ts";
import { RoundPace } from "./pace.ts";
import { WindowCounts } from "./window-counts.ts";
import type { SavedCells } from "../storage/records/cells.ts";
import { loadCells, saveCells } from "./saved-cells.ts";

const EVALUATION_BUDGET_MS = 30_000;
/** an evaluation is background work: it gives the event loop back after a quarter of a millisecond, not a read's 5, so a write waits little behind it */
const EVALUATION_SLICE_MS = 0.25;
/** a transaction of a round's readings writes about this many records at most */
const READINGS_PER_COMMIT = 64;

/** EvaluatorDeps are what evaluations read and where their notices go. */
export interface EvaluatorDeps {
  store: AlertStore;
  entries: EntryStore;
  clock: () => number;
  /** the retention floor of a workspace now (entries older are out of reach); undefined when the workspace is gone */
  floorOf(ws: string, nowMs: number): number | undefined;
  externalUrl(): string;
  /** called after an evaluation stored notices, so that they leave at once */
  notify(): void;
  /** one attempt, kept in no outbox: Alertmanager expects active alerts re-posted at each evaluation */
  resend(channel: Channel, payload: NoticePayload): void;
  /** which rules are evaluated here (a cluster's copy: its partition's, while its node owns them); default all */
  placement?: Placement;
  /** where a clean stop leaves count rules' cells for the next start (saved-cells.ts); none: every start counts windows whole */
  cells?: SavedCells;
}

/** movedAny tells whether a state changed in what a restart needs to decide notices alike: all but value and time. */
function movedAny(previous: StoredState[], states: StoredState[]): boolean {
  const before = new Map(previous.map((s) => [s.fingerprint, s]));
  return states.some((s) => {
    const p = before.get(s.fingerprint);
    return (
      p === undefined ||
      p.state !== s.state ||
      p.activeSinceMs !== s.activeSinceMs ||
      p.notifiedMs !== s.notifiedMs ||
      p.reason !== s.reason ||
      JSON.stringify(p.group) !== JSON.stringify(s.group)
    );
  });
}

/** AlertEvaluator runs due evaluations, one at a time, on a timer. */
export class AlertEvaluator {
  private timer: ReturnType<typeof setInterval> | undefined;
  private running: Promise<void> | undefined;
  /** count rules' counts per cell of server time, kept from one evaluation to the next */
  private readonly counts: WindowCounts;
  /** the slices all evaluations work in: a round of many short evaluations gives the event loop back as one long one does */
  private readonly pace: RoundPace;

  constructor(private readonly d: EvaluatorDeps) {
    this.counts = new WindowCounts(d.entries);
    if (d.cells) {
      try {
        loadCells(this.counts, d.entries, d.cells);
      } catch (e) {
        // the record is removed already: the first round counts every window whole, as without one
        console.error(JSON.stringify({ level: "warn", msg: "saved alert counts unreadable; counting windows anew", error: String(e) }));
      }
    }
    this.pace = new RoundPace(d.entries.inFlight, EVALUATION_SLICE_MS);
  }

  start(periodMs = 250): void {
    this.timer ??= setInterval(() => {
      this.tick().catch((e) => console.error(JSON.stringify({ level: "error", msg: "alert evaluations failed", error: String(e) })));
    }, periodMs);
  }

  /** tick evaluates every rule whose latest instant has not been evaluated; a tick under way is not started twice. */
  tick(): Promise<void> {
    this.running ??= this.due().finally(() => (this.running = undefined));
    return this.running;
  }

  private async due(): Promise<void> {
    const placement = this.d.placement ?? EVERYWHERE;
    if (!placement.active()) return;
    const now = this.d.clock();
    const readings: Reading[] = [];
    const commits: Promise<void>[] = [];
    try {
      await this.dueRules(placement, now, readings, commits);
    } finally {
      commits.push(this.d.store.commitReadings(readings.splice(0)));
      await Promise.allSettled(commits);
    }
    for (const c of commits) await c; // a failed commit is reported once every one has settled
  }

  private async dueRules(placement: Placement, now: number, readings: Reading[], commits: Promise<void>[]): Promise<void> {
    let ready: Promise<boolean> | undefined;
    for (const { ws, env, rule } of this.d.store.allRules<Rule>()) {
      if (!rule.enabled || !placement.owns(ws)) continue;
      const every = durationMs(rule.every)!;
      const at = Math.floor(now / every) * every;
      const last = this.d.store.lastEvaluated({ ws, env }, rule.id);
      if (last !== undefined && last >= at) continue;
      // once a tick, and only when a rule is due: the entries and records are brought up to date first
      ready ??= placement.ready().catch(() => false);
      if (!(await ready)) return;
      if (!placement.owns(ws)) continue; // the ownership moved while this node caught up
      if (this.pace.due()) await this.pace.pause();
      try {
        await this.evaluate({ ws, env }, rule, at, readings);
      } catch (e) {
        console.error(JSON.stringify({ level: "error", msg: "alert evaluation failed", rule_id: rule.id, error: String(e) }));
      }
      // a transaction's callback runs on the event loop: a round's readings go in a few short ones, not one long one
      if (readings.reduce((n, r) => n + r.values.length + 1, 0) >= READINGS_PER_COMMIT) commits.push(this.d.store.commitReadings(readings.splice(0)));
    }
  }

  /** evaluate runs one evaluation of a rule at `atMs` and stores its outcome; one that changed no state joins `readings` when given. */
  async evaluate(t: Tenant, rule: Rule, atMs: number, readings?: Reading[]): Promise<void> {
    const floorMs = this.d.floorOf(t.ws, atMs);
    if (floorMs === undefined) return;
    const scope: ReadScope = { ...t, floorMs };
    // a failed evaluation (its time budget, storage) puts the rule in state error and counts as done: no retry at every tick
    const ev = await evaluateRule(this.d.entries, scope, rule, atMs, new PacedSlice(this.pace, EVALUATION_BUDGET_MS), this.counts).catch(
      (e): Evaluation => ({ ok: false, window: windowAt(rule, atMs), reason: `the evaluation failed: ${(e as Error).message}` }),
    );
    const silences = this.d.store.list<Silence>("silence", t);
    const silenced = (group: Group) => isSilenced(silences, rule.id, group, this.d.clock());
    const previous = this.d.store.states(t, rule.id);
    const decision = decide(rule, previous, ev, atMs, silenced);
    // samples only for the groups a notice announces (Alertmanager's re-posts carry none)
    const shown = rule.channels.length ? decision.announcements.map((a) => a.state.group) : [];
    const samples =
      ev.ok && shown.length ? await collectSamples(this.d.entries, scope, rule, ev.window, shown, new PacedSlice(this.pace, EVALUATION_BUDGET_MS)) : new Map();
    for (const a of decision.announcements) a.samples = samples.get(JSON.stringify(a.state.group)) ?? [];
    const externalUrl = this.d.externalUrl();
    const everyMs = durationMs(rule.every)!;
    const notices = this.noticesOf(t, rule, decision.announcements, ev.window);
    if (notices.length || decision.transitions.length || decision.removed.length || movedAny(previous, decision.states)) {
      await this.d.store.commitEvaluation(t, { ruleId: rule.id, atMs, ...decision, notices });
    } else {
      const reading = { t, ruleId: rule.id, atMs, values: decision.states.map((s) => ({ fingerprint: s.fingerprint, value: s.value })) };
      if (readings) readings.push(reading);
      else await this.d.store.commitReadings([reading]);
    }
    if (notices.length) this.d.notify();
    const managers = rule.channels.map((id) => this.d.store.get<Channel>("channel", t, id)).filter((c) => c?.type === "alertmanager") as Channel[];
    if (managers.length === 0 || !ev.ok) return;
    const announced = new Set(decision.announcements.map((a) => a.state.fingerprint));
    for (const s of decision.states) {
      if (s.state !== "firing" || s.notifiedMs === undefined || announced.has(s.fingerprint) || silenced(s.group)) continue;
      const transition = { atMs } as StoredTransition; // only a resolve's end time reads it
      const alert = alertOf(rule, { status: "firing", state: s, transition, samples: [] }, ev.window, externalUrl);
      for (const c of managers) this.d.resend(c, { status: "firing", ruleId: rule.id, ruleName: rule.name, group: s.group, everyMs, alerts: [alert] });
    }
  }

  /** noticesOf makes, for each announcement, a notice to each of the rule's channels, its delivery pending in the transition. */
  private noticesOf(t: Tenant, rule: Rule, announcements: Announcement[], window: Window): StoredNotice[] {
    const notices: StoredNotice[] = [];
    const externalUrl = this.d.externalUrl();
    const everyMs = durationMs(rule.every)!;
    for (const a of announcements) {
      for (const channelId of rule.channels) {
        a.transition.deliveries.push({ channel_id: channelId, status: "pending", attempts: 0, error: null });
        notices.push({
          id: Bun.randomUUIDv7(),
          ws: t.ws,
          env: t.env,
          channelId,
          historyKey: ["history", t.ws, t.env, rule.id, a.transition.atMs, a.transition.id],
          payload: { status: a.status, ruleId: rule.id, ruleName: rule.name, group: a.state.group, everyMs, alerts: [alertOf(rule, a, window, externalUrl)] },
          attempts: 0,
          dueMs: 0,
          firstMs: this.d.clock(),
        });
      }
    }
    return notices;
  }

  /** retire ends every pending and firing group of a rule being disabled or deleted, with the resolved notices it owes. */
  async retire(t: Tenant, rule: Rule): Promise<void> {
    const atMs = this.d.clock();
    const decision = retireAll(rule, this.d.store.states(t, rule.id), atMs);
    if (decision.transitions.length === 0) return;
    const notices = this.noticesOf(t, rule, decision.announcements, windowAt(rule, atMs));
    await this.d.store.commitEvaluation(t, { ruleId: rule.id, atMs, ...decision, notices, retiring: true });
    if (notices.length) this.d.notify();
  }

  /** freshMs is the server time evaluations counted by /logs/hits' engine rather than from kept cells, since this start. */
  get freshMs(): number {
    return this.counts.freshMs;
  }

  /**
   * saveCells stores the count rules' cells for the next start, after stop() and before storage closes; a write under
   * way might not have dropped the cells it lands in yet, so then nothing is saved.
   */
  async saveCells(): Promise<void> {
    if (!this.d.cells || this.running || this.d.entries.inFlight.busy()) return;
    await saveCells(this.counts, this.d.entries, this.d.cells);
  }

  /** stop ends the timer and waits for an evaluation under way. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
