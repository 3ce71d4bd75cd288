// service: what the alert routes do (contract §16), per workspace environment: channels, rules, silences, the
// alerts and their history, a channel test and a rule's preview.
import { ApiError, badRequest, type FieldError, notFound, validationFailed } from "../errors.ts";
import type { ReadScope } from "../query/page.ts";
import type { AlertStore, StoredTransition } from "../storage/records/alerts.ts";
import type { EntryStore } from "../storage/entries.ts";
import type { Tenant } from "../storage/keys.ts";
import { formatMs } from "../time.ts";
import { checkChannel, shown, type Channel } from "./channels.ts";
import { sendNotice, type SendMail } from "./deliver.ts";
import { checkRule, MAX_RULES, type Rule } from "./rules.ts";
import { checkSilence, type Silence } from "./silences.ts";
import { previewRule } from "./preview.ts";

export interface AlertSettings {
  /** the smallest `every` a rule may have (SLUICE_ALERT_MIN_EVERY, default 10 s) */
  minEveryMs: number;
  /** the server's address as users reach it, for links in notices */
  externalUrl: () => string;
  sendMail: SendMail;
  /** ends a stopping rule's pending and firing groups, with the resolved notices they owe (AlertEvaluator.retire) */
  retire: (t: Tenant, rule: Rule) => Promise<void>;
  /** false on a cluster front, whose entries are its partition copies': the workspace route's preview runs on one of them */
  previewsHere: boolean;
}

const isoNow = (ms: number) => formatMs(ms);

/** AlertService answers the alert routes. */
export class AlertService {
  constructor(
    readonly store: AlertStore,
    private readonly entries: EntryStore,
    readonly settings: AlertSettings,
  ) {}

  channel(t: Tenant, id: string): Channel {
    const c = this.store.get<Channel>("channel", t, id);
    if (!c) throw notFound("VALIDATION_INVALID_REQUEST", `no alert channel ${JSON.stringify(id)} in this workspace environment`);
    return c;
  }

  channels(t: Tenant): Channel[] {
    return this.store.list<Channel>("channel", t).map(shown);
  }

  async createChannel(t: Tenant, b: Record<string, unknown>, nowMs: number): Promise<Channel> {
    const c: Channel = { id: Bun.randomUUIDv7(), ...checkChannel(b), created_at: isoNow(nowMs), updated_at: isoNow(nowMs) };
    await this.store.put("channel", t, c.id, c);
    return shown(c);
  }

  async updateChannel(t: Tenant, id: string, b: Record<string, unknown>, nowMs: number): Promise<Channel> {
    const old = this.channel(t, id);
    const c: Channel = { ...old, ...checkChannel(b, old), updated_at: isoNow(nowMs) };
    await this.store.put("channel", t, id, c);
    return shown(c);
  }

  async deleteChannel(t: Tenant, id: string): Promise<void> {
    const used = this.store.list<Rule>("rule", t).find((r) => r.channels.includes(id));
    if (used)
      throw badRequest("VALIDATION_FAILED", `rule ${used.id} (${used.name}) sends to this channel: remove it from the rule's channels first`, {
        rule_id: used.id,
      });
    if (!(await this.store.remove("channel", t, id))) this.channel(t, id);
  }

  /** testChannel sends one test notification now. */
  async testChannel(t: Tenant, id: string, nowMs: number) {
    const c = this.channel(t, id);
    const at = formatMs(nowMs);
    const alert = {
      status: "firing",
      labels: { alertname: "SluiceTestNotification" },
      annotations: { summary: "a test notification from Sluice" },
      startsAt: at,
      endsAt: "0001-01-01T00:00:00Z",
      generatorURL: `${this.settings.externalUrl()}/ui`,
      fingerprint: "0000000000000000",
      value: 0,
      samples: [],
    };
    const o = await sendNotice(
      c,
      { payload: { status: "firing", ruleId: "test", ruleName: "SluiceTestNotification", alerts: [alert], test: true } },
      this.settings.externalUrl(),
      nowMs,
      this.settings.sendMail,
    );
    return { delivered: o.ok, status: o.status, attempts: 1, ...(o.error ? { error: o.error } : {}) };
  }

  rule(t: Tenant, id: string): Rule {
    const r = this.store.get<Rule>("rule", t, id);
    if (!r) throw notFound("VALIDATION_INVALID_REQUEST", `no alert rule ${JSON.stringify(id)} in this workspace environment`);
    return r;
  }

  rules(t: Tenant): Rule[] {
    return this.store.list<Rule>("rule", t);
  }

  private limits(t: Tenant) {
    return { minEveryMs: this.settings.minEveryMs, channelExists: (id: string) => this.store.get("channel", t, id) !== undefined };
  }

  async createRule(t: Tenant, b: Record<string, unknown>, nowMs: number): Promise<Rule> {
    const checked = checkRule(b, {}, this.limits(t));
    if (this.store.count("rule", t) >= MAX_RULES)
      throw badRequest("VALIDATION_FAILED", `a workspace environment has at most ${MAX_RULES} alert rules: delete one first`, {
        errors: [{ field: "", message: `at most ${MAX_RULES} rules`, log_index: null }],
      });
    const r: Rule = { id: Bun.randomUUIDv7(), ...checked, created_at: isoNow(nowMs), updated_at: isoNow(nowMs) };
    await this.store.put("rule", t, r.id, r);
    return r;
  }

  async updateRule(t: Tenant, id: string, b: Record<string, unknown>, nowMs: number): Promise<Rule> {
    const old = this.rule(t, id);
    const r: Rule = { ...old, ...checkRule(b, old, this.limits(t)), updated_at: isoNow(nowMs) };
    await this.store.put("rule", t, id, r);
    if (old.enabled && !r.enabled) await this.settings.retire(t, r); // a disabled rule's incidents end now, resolved
    return r;
  }

  async deleteRule(t: Tenant, id: string): Promise<void> {
    await this.settings.retire(t, this.rule(t, id)); // its incidents end first, with their resolved notices
    await this.store.remove("rule", t, id);
  }

  silences(t: Tenant): Silence[] {
    return this.store.list<Silence>("silence", t);
  }

  async createSilence(t: Tenant, b: Record<string, unknown>, nowMs: number): Promise<Silence> {
    const s: Silence = { id: Bun.randomUUIDv7(), ...checkSilence(b, (id) => this.store.get<Rule>("rule", t, id)?.group_by), created_at: isoNow(nowMs) };
    await this.store.put("silence", t, s.id, s);
    return s;
  }

  async deleteSilence(t: Tenant, id: string): Promise<void> {
    if (!(await this.store.remove("silence", t, id)))
      throw notFound("VALIDATION_INVALID_REQUEST", `no silence ${JSON.stringify(id)} in this workspace environment`);
  }

  /** alerts lists the pending and firing instances (and rules in state error). */
  alerts(t: Tenant) {
    return this.store.stateEntries(t).map(({ ruleId, state: s }) => ({
      rule_id: ruleId,
      group: s.group,
      fingerprint: s.fingerprint,
      state: s.state,
      value: s.value,
      active_since: formatMs(s.activeSinceMs),
      last_evaluated_at: formatMs(s.lastEvaluatedMs),
      ...(s.reason ? { reason: s.reason } : {}),
    }));
  }

  history(t: Tenant, ruleId: string | undefined, fromMs: number, toMs: number) {
    return this.store.history(t, ruleId, fromMs, toMs, 1000).map(transitionView);
  }

  /** preview replays a rule over a past range, exactly as live evaluation would have run it (no notice is sent). */
  preview(scope: ReadScope, b: Record<string, unknown>, fromMs: number, toMs: number, budgetMs: number) {
    if (!this.settings.previewsHere)
      throw badRequest(
        "VALIDATION_INVALID_REQUEST",
        "a cluster node previews a rule only through /api/v1/workspace/alerts/rules/preview (with a key of the workspace), which runs on a copy of its partition",
      );
    const checked = withPrefix("rule.", () => checkRule(b, {}, { minEveryMs: this.settings.minEveryMs, channelExists: () => true }));
    return previewRule(this.entries, scope, { id: "preview", ...checked, created_at: "", updated_at: "" }, fromMs, toMs, budgetMs);
  }
}

/** withPrefix runs a check of a nested object, naming its bad fields from the body's top (`window` → `rule.window`). */
function withPrefix<T>(prefix: string, check: () => T): T {
  try {
    return check();
  } catch (e) {
    const errors = e instanceof ApiError ? (e.details?.errors as FieldError[] | undefined) : undefined;
    if (!errors) throw e;
    throw validationFailed(errors.map((x) => ({ ...x, field: `${prefix}${x.field}` })));
  }
}

/** transitionView is a stored transition as GET /alerts/history shows it. */
function transitionView(tr: StoredTransition) {
  return {
    at: formatMs(tr.atMs),
    rule_id: tr.ruleId,
    group: tr.group,
    fingerprint: tr.fingerprint,
    from_state: tr.from,
    to_state: tr.to,
    value: tr.value,
    deliveries: tr.deliveries,
  };
}
