// labels: an entry as Loki sees it (contract §17): stream labels, structured metadata and the line.
import type { Entry } from "../storage/entries.ts";

/** Labels is a label set: name → value. */
export type Labels = Record<string, string>;

/** LokiEntry is one stored entry seen through Loki: its time, id, stream labels, structured metadata and line. */
export interface LokiEntry {
  clientMs: number;
  id: string;
  stream: Labels;
  metadata: Labels;
  line: string;
}

/** label names already made valid: the same few paths recur in every entry of a workspace */
const validNames = new Map<string, string>();
const VALID_NAMES_KEPT = 10_000;

/** labelName makes a valid Loki label name: every character outside [a-zA-Z0-9_] becomes `_`, and a leading digit gets `_` before it. */
export const labelName = (name: string): string => {
  const known = validNames.get(name);
  if (known !== undefined) return known;
  const clean = name.replace(/[^a-zA-Z0-9_]/g, "_");
  const valid = /^[0-9]/.test(clean) ? `_${clean}` : clean;
  if (validNames.size >= VALID_NAMES_KEPT) validNames.clear();
  validNames.set(name, valid);
  return valid;
};

/** flatten adds the scalar leaves of `obj` (through objects, not arrays; nulls skipped) as `prefix_a_b` labels. */
export function flatten(obj: Record<string, unknown> | null, prefix: string, into: Labels): Labels {
  if (!obj) return into;
  for (const k in obj) {
    if (!Object.hasOwn(obj, k)) continue;
    const v = obj[k];
    const name = prefix === "" ? k : `${prefix}_${k}`;
    if (v === null || Array.isArray(v)) continue;
    if (typeof v === "object") flatten(v as Record<string, unknown>, name, into);
    else into[labelName(name)] = String(v);
  }
  return into;
}

/** leafNames adds the label names flatten would give the scalar leaves of `obj`, without their values. */
export function leafNames(obj: Record<string, unknown> | null, prefix: string, into: Set<string>): void {
  if (!obj) return;
  for (const k in obj) {
    if (!Object.hasOwn(obj, k)) continue;
    const v = obj[k];
    if (v === null || Array.isArray(v)) continue;
    const name = prefix === "" ? k : `${prefix}_${k}`;
    if (typeof v === "object") leafNames(v as Record<string, unknown>, name, into);
    else into.add(labelName(name));
  }
}

/** FIXED_LABELS are the stream labels every entry has, besides its context's leaves. */
export const FIXED_LABELS = ["environment", "level", "detected_level", "action", "service_name"] as const;

/** serviceName is context.service_name, else context.service.name, else the action. */
function serviceName(e: Entry): string {
  const c = e.context;
  if (c && (typeof c.service_name === "string" || typeof c.service_name === "number")) return String(c.service_name);
  const service = c?.service;
  if (service && typeof service === "object" && !Array.isArray(service)) {
    const name = (service as Record<string, unknown>).name;
    if (typeof name === "string" || typeof name === "number") return String(name);
  }
  return e.action;
}

/** streamLabels are a stored entry's stream labels; the fixed labels win over a context leaf of the same name. */
export function streamLabels(e: Entry, environment: string): Labels {
  const stream = flatten(e.context, "", {});
  return Object.assign(stream, { environment, level: e.level, detected_level: e.level, action: e.action, service_name: serviceName(e) });
}

/** lokiEntry maps a stored entry: stream labels, structured metadata, line. */
export function lokiEntry(e: Entry, environment: string): LokiEntry {
  const stream = streamLabels(e, environment);
  const metadata: Labels = {};
  flatten(e.actor, "actor", metadata);
  flatten(e.target, "target", metadata);
  flatten(e.metadata, "metadata", metadata);
  if (e.tags.length > 0) metadata.tags = e.tags.join(",");
  metadata.sluice_id = e.id;
  const line = e.message ?? (e.metadata ? JSON.stringify(e.metadata) : "");
  return { clientMs: e.clientMs, id: e.id, stream, metadata, line };
}

/** labelsKey is a label set's identity: its pairs sorted by name. */
export const labelsKey = (labels: Labels): string =>
  JSON.stringify(
    Object.keys(labels)
      .sort()
      .map((k) => [k, labels[k]]),
  );
