// silences: windows of time in which a rule's (or every rule's) notices are muted; states still change (contract §16).
import { validationFailed, type FieldError } from "../errors.ts";
import { parseRfc3339 } from "../time.ts";
import type { Group } from "./evaluate.ts";

/** Silence is a stored silence; `match` keys are group_by fields, values their text forms (null: the null group). */
export interface Silence {
  id: string;
  rule_id: string | null;
  match: Record<string, string | null>;
  starts_at: string;
  ends_at: string;
  comment: string;
  created_at: string;
}

/** checkSilence reads a new silence, throwing 400 VALIDATION_FAILED listing every bad field. */
export function checkSilence(b: Record<string, unknown>, groupByOf: (ruleId: string) => string[] | undefined): Omit<Silence, "id" | "created_at"> {
  const errors: FieldError[] = [];
  const bad = (field: string, message: string) => errors.push({ field, message, log_index: null });
  const ruleId = b.rule_id ?? null;
  const groupBy = typeof ruleId === "string" ? groupByOf(ruleId) : undefined;
  if (ruleId !== null && groupBy === undefined) bad("rule_id", `no rule ${JSON.stringify(ruleId)}: leave rule_id out to silence every rule`);
  const match = b.match ?? {};
  if (typeof match !== "object" || match === null || Array.isArray(match) || Object.values(match).some((v) => v !== null && typeof v !== "string"))
    bad("match", 'match must be an object of group_by fields to values, e.g. {"level": "error"}');
  else if (groupBy)
    for (const k of Object.keys(match))
      if (!groupBy.includes(k)) bad(`match.${k}`, `${k} is not among the rule's group_by fields (${groupBy.join(", ") || "none"})`);
  const starts = typeof b.starts_at === "string" ? parseRfc3339(b.starts_at) : null;
  const ends = typeof b.ends_at === "string" ? parseRfc3339(b.ends_at) : null;
  if (!starts) bad("starts_at", "starts_at must be an RFC 3339 date-time such as 2026-11-27T10:00:00Z");
  if (!ends) bad("ends_at", "ends_at must be an RFC 3339 date-time such as 2026-11-27T12:00:00Z");
  else if (starts && ends.ms <= starts.ms) bad("ends_at", "ends_at must be after starts_at");
  if (typeof b.comment !== "string") bad("comment", "comment must be a string saying why");
  if (errors.length) throw validationFailed(errors);
  return {
    rule_id: ruleId as string | null,
    match: match as Record<string, string | null>,
    starts_at: new Date(starts!.ms).toISOString(),
    ends_at: new Date(ends!.ms).toISOString(),
    comment: b.comment as string,
  };
}

/** isSilenced tells whether a group of a rule is muted at `nowMs`. */
export function isSilenced(silences: Silence[], ruleId: string, group: Group, nowMs: number): boolean {
  return silences.some(
    (s) =>
      (s.rule_id === null || s.rule_id === ruleId) &&
      Date.parse(s.starts_at) <= nowMs &&
      nowMs < Date.parse(s.ends_at) &&
      Object.entries(s.match).every(([k, v]) => group !== null && k in group && group[k] === v),
  );
}
