// SLUICE_PLANS_FILE (contract §8): every field checked, each error naming its field; a valid file overrides and adds plans.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUILT_IN_PLANS } from "../../../src/limits/plans.ts";
import { loadPlans, parsePlans } from "../../../src/limits/plans-file.ts";

const NUMERIC = [
  "logs_per_month",
  "log_retention_days",
  "requests_per_minute",
  "validate_requests_per_minute",
  "max_log_size",
  "max_batch_size",
  "max_metadata_depth",
  "max_tags",
] as const;

const team = () => ({
  code: "team",
  logs_per_month: 20_000,
  log_retention_days: 30,
  requests_per_minute: 200,
  validate_requests_per_minute: 50,
  max_log_size: 900,
  max_batch_size: 100,
  max_metadata_depth: 4,
  max_tags: 8,
});

const dir = mkdtempSync(join(tmpdir(), "sluice-plans-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
/** fileWith writes text to a fresh file and returns its path. */
function fileWith(text: string): string {
  const path = join(dir, `plans-${++files}.json`);
  writeFileSync(path, text);
  return path;
}

/** problemOf returns the message parsePlans throws, or "accepted". */
function problemOf(doc: unknown): string {
  try {
    parsePlans(doc);
    return "accepted";
  } catch (e) {
    return (e as Error).message;
  }
}

describe("parsePlans rejects", () => {
  // [what is wrong, field the message must name, document]
  const shape: [string, string, unknown][] = [
    ["an empty object", "plans", {}],
    ["plans that is an object", "plans", { plans: {} }],
    ["plans that is a string", "plans", { plans: "free" }],
    ["a top-level array", "plans", [team()]],
    ["null", "plans", null],
    ["a plan that is a number", "plans[0]", { plans: [5] }],
    ["a plan that is null", "plans[1]", { plans: [team(), null] }],
    ["a plan that is an array", "plans[0]", { plans: [[]] }],
    ["a plan without code", "plans[0].code", { plans: [{ ...team(), code: undefined }] }],
    ["a numeric code", "plans[0].code", { plans: [{ ...team(), code: 7 }] }],
    ["an empty code", "plans[0].code", { plans: [{ ...team(), code: "" }] }],
    ["a code with upper case", "plans[0].code", { plans: [{ ...team(), code: "Team" }] }],
    ["a code with a space", "plans[0].code", { plans: [{ ...team(), code: "my team" }] }],
    ["a code of 65 characters", "plans[0].code", { plans: [{ ...team(), code: "a".repeat(65) }] }],
    ["a duplicate code", "plans[1].code", { plans: [team(), { ...team(), logs_per_month: 5 }] }],
    ["an unknown field", "plans[0].retention", { plans: [{ ...team(), retention: 30 }] }],
  ];
  test.each(shape)("%s, naming %p", (_what, field, doc) => {
    const message = problemOf(doc);
    expect(message).not.toBe("accepted");
    expect(message).toContain(field);
  });

  // every numeric field, each way of getting it wrong
  const bad: [string, unknown][] = [
    ["missing", undefined],
    ["a fraction", 1.5],
    ["a string", "100"],
    ["zero", 0],
    ["below -1", -2],
    ["null", null],
    ["a boolean", true],
  ];
  const numeric = NUMERIC.flatMap((field) => bad.map(([how, value]) => [field, how, value] as [string, string, unknown]));
  test.each(numeric)("%s that is %s, naming plans[1].<field>", (field, _how, value) => {
    const broken: Record<string, unknown> = { ...team(), code: "broken", [field]: value };
    if (value === undefined) delete broken[field];
    const message = problemOf({ plans: [team(), broken] });
    expect(message).not.toBe("accepted");
    expect(message).toContain(`plans[1].${field}`);
  });
});

describe("parsePlans accepts", () => {
  test("-1 (none) and 1 in every numeric field, and an empty list", () => {
    for (const field of NUMERIC) {
      expect(problemOf({ plans: [{ ...team(), [field]: -1 }] })).toBe("accepted");
      expect(problemOf({ plans: [{ ...team(), [field]: 1 }] })).toBe("accepted");
    }
    expect(parsePlans({ plans: [] })).toEqual([]);
  });

  test("returns the plans with exactly the plan fields", () => {
    expect(parsePlans({ plans: [team()] })).toEqual([team()]);
  });
});

describe("loadPlans", () => {
  test("without a file gives the built-in plans of the contract table", () => {
    expect(loadPlans(undefined)).toEqual([...BUILT_IN_PLANS]);
  });

  test("a valid file overrides a built-in plan and adds a new one, keeping the others", () => {
    const cheaper = { ...BUILT_IN_PLANS.find((p) => p.code === "free")!, logs_per_month: 100, requests_per_minute: 10 };
    const plans = loadPlans(fileWith(JSON.stringify({ plans: [cheaper, team()] })));
    const byCode = Object.fromEntries(plans.map((p) => [p.code, p]));
    expect(Object.keys(byCode).sort()).toEqual(["developer", "free", "professional", "team", "unlimited"]);
    expect(byCode.free).toEqual(cheaper);
    expect(byCode.team).toEqual(team());
    expect(byCode.developer).toEqual(BUILT_IN_PLANS.find((p) => p.code === "developer")!);
  });

  // [file text, what the message must say]
  const unreadable: [string, string][] = [
    ['{"plans": [', "JSON"],
    ["plans: []", "JSON"],
    ["", "JSON"],
    ['{"plans": 3}', "plans"],
    [JSON.stringify({ plans: [{ ...team(), max_tags: 0 }] }), "plans[0].max_tags"],
  ];
  test.each(unreadable)("a file holding %p is refused, naming %p and the file", (text, says) => {
    const path = fileWith(text);
    expect(() => loadPlans(path)).toThrow(says);
    expect(() => loadPlans(path)).toThrow(path);
  });

  test("a missing file is refused, naming the file", () => {
    const path = join(dir, "no-such-file.json");
    expect(() => loadPlans(path)).toThrow(path);
  });
});
