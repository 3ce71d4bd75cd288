// notices: the bodies channels receive (contract §16). A notice's alerts are built when an evaluation decides it, in
// Alertmanager's alert shape with `value` and `samples`; each channel type then wraps them its own way.
import { createHmac } from "node:crypto";
import type { NoticePayload } from "../storage/records/alerts.ts";
import { formatMs } from "../time.ts";
import type { Window } from "../query/explore-request.ts";
import type { Group } from "./evaluate.ts";
import type { Announcement } from "./states.ts";
import type { Rule } from "./rules.ts";

/** ZERO_TIME is Alertmanager's "no end yet". */
const ZERO_TIME = "0001-01-01T00:00:00Z";

/** labelName turns a group field into a label name Alertmanager accepts (`metadata.status` → `metadata_status`). */
export const labelName = (field: string): string => field.replace(/[^a-zA-Z0-9_]/g, "_");

/** labelsOf is an alert's labels: alertname, the rule's labels, then the group's values ("" for the null group). */
export function labelsOf(rule: Rule, group: Group): Record<string, string> {
  const out: Record<string, string> = { alertname: rule.name, ...rule.labels };
  for (const [k, v] of Object.entries(group ?? {})) out[labelName(k)] = v ?? "";
  return out;
}

/** generatorUrl opens the explorer on the rule's query over the evaluated window. */
export function generatorUrl(externalUrl: string, rule: Rule, window: Window): string {
  const p = new URLSearchParams({ q: rule.query, range: "custom", from: formatMs(window.fromMs), to: formatMs(window.toMs) });
  return `${externalUrl.replace(/\/$/, "")}/ui?${p}`;
}

/** alertOf is one announcement as an Alertmanager webhook alert, with its value and samples. */
export function alertOf(rule: Rule, a: Announcement, window: Window, externalUrl: string): Record<string, unknown> {
  return {
    status: a.status,
    labels: labelsOf(rule, a.state.group),
    annotations: { ...rule.annotations },
    startsAt: formatMs(a.state.activeSinceMs),
    endsAt: a.status === "resolved" ? formatMs(a.transition.atMs) : ZERO_TIME,
    generatorURL: generatorUrl(externalUrl, rule, window),
    fingerprint: a.state.fingerprint,
    value: a.state.value,
    samples: a.samples,
  };
}

/** webhookBody is Alertmanager's webhook format version 4 for one notice. */
export function webhookBody(p: NoticePayload, receiver: string, externalUrl: string): Record<string, unknown> {
  const labels = p.alerts.map((a) => a.labels as Record<string, string>);
  const common = labels.length ? Object.fromEntries(Object.entries(labels[0]).filter(([k, v]) => labels.every((l) => l[k] === v))) : {};
  const annotations = p.alerts.map((a) => a.annotations as Record<string, string>);
  const commonAnnotations = annotations.length
    ? Object.fromEntries(Object.entries(annotations[0]).filter(([k, v]) => annotations.every((l) => l[k] === v)))
    : {};
  return {
    version: "4",
    status: p.status,
    receiver,
    groupKey: `{}:{alertname=${JSON.stringify(p.ruleName)},rule_id=${JSON.stringify(p.ruleId)}}`,
    truncatedAlerts: 0,
    groupLabels: { alertname: p.ruleName },
    commonLabels: common,
    commonAnnotations,
    externalURL: externalUrl,
    alerts: p.alerts,
  };
}

/** signature is the webhook's `X-Sluice-Signature` value: the body's HMAC-SHA256 under the channel's secret. */
export const signature = (secret: string, body: string): string => `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;

/** groupText is a group as subjects show it: `{level=error, action=checkout}`, or "" without group_by. */
const groupText = (group: Record<string, string | null> | null | undefined): string =>
  group
    ? `{${Object.entries(group)
        .map(([k, v]) => `${k}=${v ?? "null"}`)
        .join(", ")}}`
    : "";

/** summaryLines is the text of a notice: its subject, then a line per alert with its value and link, then its samples. */
export function summaryLines(p: NoticePayload): { subject: string; text: string } {
  const subject = `[${p.status.toUpperCase()}] ${p.ruleName} ${groupText(p.group)}`.trim();
  const lines: string[] = [];
  for (const a of p.alerts) {
    lines.push(`${subject} value ${String(a.value)}`, `${a.generatorURL}`);
    for (const s of (a.samples as { server_timestamp: string; level: string; action: string; message: string | null }[]) ?? [])
      lines.push(`  ${s.server_timestamp} ${s.level} ${s.action}${s.message ? ` ${s.message}` : ""}`);
  }
  return { subject, text: lines.join("\n") };
}

/** slackBody is a Slack incoming-webhook message for a notice. */
export function slackBody(p: NoticePayload): Record<string, unknown> {
  const { subject, text } = summaryLines(p);
  return { text: subject, blocks: [{ type: "section", text: { type: "mrkdwn", text: `*${subject}*\n${text}`.slice(0, 2900) } }] };
}

/** alertmanagerBody is the POST /api/v2/alerts body: the alerts without Sluice's extras, endsAt set. */
export function alertmanagerBody(p: NoticePayload, endsAheadMs: number, nowMs: number): Record<string, unknown>[] {
  return p.alerts.map((a) => ({
    labels: a.labels,
    annotations: a.annotations,
    startsAt: a.startsAt,
    endsAt: a.status === "resolved" ? a.endsAt : formatMs(nowMs + endsAheadMs),
    generatorURL: a.generatorURL,
  }));
}
