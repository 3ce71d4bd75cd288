// plans file: SLUICE_PLANS_FILE overrides or adds plans (contract §8); a bad file stops the server, naming the field.
import { readFileSync } from "node:fs";
import { BUILT_IN_PLANS, PlanTable, type Plan } from "./plans.ts";

const NUMERIC: (keyof Plan)[] = [
  "logs_per_month",
  "log_retention_days",
  "requests_per_minute",
  "validate_requests_per_minute",
  "max_log_size",
  "max_batch_size",
  "max_metadata_depth",
  "max_tags",
];

/** planTable is the plan table of a configuration (SLUICE_PLANS_FILE): the server and the CLI both take theirs from here. */
export const planTable = (path: string | undefined): PlanTable => new PlanTable(loadPlans(path));

/** loadPlans returns the built-in plans with those of the file (if any) replacing or joining them. */
export function loadPlans(path: string | undefined): Plan[] {
  if (!path) return [...BUILT_IN_PLANS];
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new Error(`SLUICE_PLANS_FILE ${path}: cannot read it as JSON (${(e as Error).message})`);
  }
  return mergePlans(parsePlans(doc, path));
}

/** parsePlans checks a plans document field by field; the error names the first bad one. */
export function parsePlans(doc: unknown, source = "plans file"): Plan[] {
  const fail = (where: string, what: string) => new Error(`${source}: ${where} ${what}`);
  if (typeof doc !== "object" || doc === null || !Array.isArray((doc as { plans?: unknown }).plans)) {
    throw fail("plans", 'must be an array: {"plans": [{"code": "team", ...}]}');
  }
  const seen = new Set<string>();
  return (doc as { plans: unknown[] }).plans.map((p, i) => {
    const at = `plans[${i}]`;
    if (typeof p !== "object" || p === null || Array.isArray(p)) throw fail(at, "must be an object");
    const r = p as Record<string, unknown>;
    if (typeof r.code !== "string" || !/^[a-z0-9_-]{1,64}$/.test(r.code)) {
      throw fail(`${at}.code`, "must be 1–64 characters of a-z, 0-9, _ or -");
    }
    if (seen.has(r.code)) throw fail(`${at}.code`, `repeats ${JSON.stringify(r.code)}; each plan once`);
    seen.add(r.code);
    for (const f of NUMERIC) {
      const v = r[f];
      if (!Number.isInteger(v) || ((v as number) < 1 && v !== -1) || (v as number) > 2 ** 40) {
        throw fail(`${at}.${f}`, `must be a whole number ≥ 1, or -1 for none (got ${JSON.stringify(v)})`);
      }
    }
    const unknown = Object.keys(r).filter((k) => k !== "code" && !NUMERIC.includes(k as keyof Plan));
    if (unknown.length) throw fail(`${at}.${unknown[0]}`, `is not a plan field; the fields are code, ${NUMERIC.join(", ")}`);
    return Object.fromEntries([["code", r.code], ...NUMERIC.map((f) => [f, r[f]])]) as Plan;
  });
}

function mergePlans(fromFile: Plan[]): Plan[] {
  const byCode = new Map(BUILT_IN_PLANS.map((p) => [p.code, p]));
  for (const p of fromFile) byCode.set(p.code, p);
  return [...byCode.values()];
}
