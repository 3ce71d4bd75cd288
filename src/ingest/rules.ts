// rules: the entry rules of contract §4, one module shared by writes and /logs/validate.
// The compiled TypeBox schema is the first gate; the rules it cannot express follow.
import { TypeCompiler } from "@sinclair/typebox/compiler";
import type { FieldError } from "../errors.ts";
import { limit, type Plan } from "../limits/plans.ts";
import { CreateLogRequest, ENVIRONMENTS, LEVELS, type Environment, type Level } from "../schema.ts";
import { parseRfc3339 } from "../time.ts";

/** NewEntry is a valid entry, normalised, before it gets an id and a server timestamp. */
export interface NewEntry {
  environment: Environment | undefined;
  level: Level;
  action: string;
  message: string | null;
  tags: string[];
  actor: Record<string, unknown> | null;
  target: Record<string, unknown> | null;
  context: Record<string, unknown> | null;
  metadata: Record<string, unknown> | null;
  clientMs: number;
}

export interface EntryCheck {
  entry: NewEntry | undefined; // set only when errors is empty
  errors: FieldError[];
}

const schema = TypeCompiler.Compile(CreateLogRequest);
const KNOWN = new Set(Object.keys(CreateLogRequest.properties));
const OBJECT_FIELDS = ["actor", "target", "context", "metadata"] as const;

/** What each field must be, said so that the sender knows how to fix it. */
const RULE: Record<string, string> = {
  action: "action is required: a string of 1–255 characters once trimmed",
  level: `level is required: one of ${LEVELS.join(", ")}`,
  clientTimestamp: "clientTimestamp is required: an RFC 3339 date-time with a time zone, e.g. 2026-11-22T10:00:00.000Z",
  environment: `environment must be one of ${ENVIRONMENTS.join(", ")} (or omitted to use the key's)`,
  message: "message must be a string or null",
  tags: "tags must be an array of strings of 1–64 characters",
  actor: "actor must be a JSON object or null",
  target: "target must be a JSON object or null",
  context: "context must be a JSON object or null",
  metadata: "metadata must be a JSON object or null",
};

/**
 * EntryBound is what a body's scan (scan.ts) knows of an entry: its JSON size at most, how deeply its values nest
 * at most, and whether a string of it may hold a lone surrogate.
 */
export interface EntryBound {
  size: number;
  nesting: number;
  surrogates: boolean;
}
export const UNBOUNDED: EntryBound = { size: Infinity, nesting: Infinity, surrogates: true };

/**
 * checkEntry applies every entry rule to one received value and lists all its problems. A bound within the
 * plan's limits spares the size rule its stringify and the depth rule its walk; the verdict is the same.
 */
export function checkEntry(raw: unknown, logIndex: number | null, plan: Plan, bound: EntryBound = UNBOUNDED): EntryCheck {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return { entry: undefined, errors: [{ field: "", message: "each entry must be a JSON object", log_index: logIndex }] };
  }
  const e = raw as Record<string, unknown>;
  const errors: FieldError[] = [];
  const fail = (field: string, message: string) => errors.push({ field, message, log_index: logIndex });

  const bad = new Set<string>(); // fields the schema refused: no further rule applies to them
  if (!schema.Check(e)) {
    for (const err of schema.Errors(e)) {
      const field = err.path.split("/")[1] ?? "";
      if (bad.has(field)) continue;
      bad.add(field);
      if (field === "tags" && Array.isArray(e.tags)) badTags(e.tags, fail);
      else fail(field, RULE[field] ?? err.message);
    }
  }

  if (!bad.has("action")) {
    const len = (e.action as string).trim().length;
    if (len < 1 || len > 255) fail("action", `${RULE.action}; it has ${len}`);
  }
  let clientMs = 0;
  if (!bad.has("clientTimestamp")) {
    const t = parseRfc3339(e.clientTimestamp as string);
    if (t) clientMs = t.ms;
    else fail("clientTimestamp", `${RULE.clientTimestamp}; ${JSON.stringify(e.clientTimestamp)} is not a real date-time`);
  }
  let tags: string[] = [];
  if (!bad.has("tags") && Array.isArray(e.tags)) {
    tags = distinct(e.tags as string[]);
    if (tags.length > limit(plan.max_tags)) fail("tags", `at most ${plan.max_tags} distinct tags on the ${plan.code} plan; this entry has ${tags.length}`);
  }
  for (const f of OBJECT_FIELDS) {
    if (bad.has(f) || e[f] == null || plan.max_metadata_depth < 0 || bound.nesting <= plan.max_metadata_depth) continue;
    if (deeperThan(e[f], plan.max_metadata_depth)) {
      fail(f, `${f} nests deeper than ${plan.max_metadata_depth} levels, the ${plan.code} plan's limit (the object itself is level 1)`);
    }
  }
  if (bound.surrogates) {
    const at = loneSurrogateAt(e, bad);
    if (at !== undefined)
      fail(
        at,
        `${at} holds a lone surrogate (an unpaired \\uD800–\\uDFFF escape), which is not Unicode text and cannot be stored as sent; pair it or replace it with \\uFFFD`,
      );
  }
  if (bound.size > limit(plan.max_log_size)) {
    const size = byteSize(e);
    if (size === undefined) fail("", "entry nests too deeply to be stored; flatten it");
    else if (size > limit(plan.max_log_size)) fail("", `entry is ${size} bytes as JSON; the ${plan.code} plan allows ${plan.max_log_size}`);
  }

  if (errors.length > 0) return { entry: undefined, errors };
  return {
    entry: {
      environment: (e.environment as Environment | null | undefined) ?? undefined,
      level: e.level as Level,
      action: e.action as string,
      message: (e.message as string | null | undefined) ?? null,
      tags,
      actor: (e.actor as NewEntry["actor"]) ?? null,
      target: (e.target as NewEntry["target"]) ?? null,
      context: (e.context as NewEntry["context"]) ?? null,
      metadata: (e.metadata as NewEntry["metadata"]) ?? null,
      clientMs,
    },
    errors,
  };
}

/** unknownFields lists the fields of an entry that no rule knows: a write ignores them, /logs/validate warns of them. */
export function unknownFields(raw: unknown): string[] {
  const found: string[] = [];
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return found;
  for (const k in raw) if (!KNOWN.has(k)) found.push(k); // own keys only: parsed JSON inherits no enumerable ones
  return found;
}

/** distinct drops repeated tags, keeping first occurrences in order; most tag lists are short and have none. */
function distinct(tags: string[]): string[] {
  for (let i = 1; i < tags.length; i++) for (let j = 0; j < i; j++) if (tags[i] === tags[j]) return [...new Set(tags)];
  return tags;
}

/** badTags reports each tag that is not a string of 1–64 characters, at its dotted path. */
function badTags(tags: unknown[], fail: (field: string, message: string) => void): void {
  tags.forEach((t, i) => {
    if (typeof t !== "string" || t.length < 1 || t.length > 64) fail(`tags.${i}`, `tags[${i}] must be a string of 1–64 characters`);
  });
}

/** byteSize is the UTF-8 length of the entry's JSON, or undefined when it nests too deeply to serialise. */
function byteSize(e: unknown): number | undefined {
  try {
    return Buffer.byteLength(JSON.stringify(e), "utf8");
  } catch (err) {
    if (err instanceof RangeError) return undefined; // stack exhausted by nesting: no plan stores that
    throw err;
  }
}

const STRING_FIELDS = ["action", "message"] as const;

/**
 * loneSurrogateAt names the first stored field, dotted down to the key, with a string (a key included) that holds a lone
 * surrogate; undefined when there is none. JSON.parse keeps one from a \uD800–\uDFFF escape, but UTF-8 cannot: it
 * would read back as U+FFFD, and the entry could not be found by what was sent. Fields in `skip` failed already.
 */
export function loneSurrogateAt(e: Record<string, unknown>, skip: ReadonlySet<string>): string | undefined {
  for (const f of STRING_FIELDS) if (!skip.has(f) && typeof e[f] === "string" && !(e[f] as string).isWellFormed()) return f;
  if (!skip.has("tags") && Array.isArray(e.tags)) {
    const i = e.tags.findIndex((t) => typeof t === "string" && !t.isWellFormed());
    if (i >= 0) return `tags.${i}`;
  }
  for (const f of OBJECT_FIELDS) {
    if (skip.has(f) || typeof e[f] !== "object" || e[f] === null) continue;
    const values: unknown[] = [e[f]];
    const paths: string[] = [f]; // beside values, as deeperThan keeps depths
    while (values.length > 0) {
      const v = values.pop()!;
      const path = paths.pop()!;
      for (const k in v as Record<string, unknown>) {
        const at = `${path}.${k}`;
        if (!k.isWellFormed()) return at;
        const c = (v as Record<string, unknown>)[k];
        if (typeof c === "string" && !c.isWellFormed()) return at;
        if (typeof c === "object" && c !== null) {
          values.push(c);
          paths.push(at);
        }
      }
    }
  }
  return undefined;
}

/** deeperThan tells whether a JSON value nests more than `maxDepth` objects/arrays, without recursion. */
export function deeperThan(value: unknown, maxDepth: number): boolean {
  const values: unknown[] = [value];
  const depths: number[] = [1]; // beside values: no tuple allocated per node
  while (values.length > 0) {
    const v = values.pop()!;
    const depth = depths.pop()!;
    if (depth > maxDepth) return true;
    if (Array.isArray(v)) {
      for (const c of v) {
        if (typeof c !== "object" || c === null) continue;
        values.push(c);
        depths.push(depth + 1);
      }
    } else {
      const o = v as Record<string, unknown>;
      for (const k in o) {
        const c = o[k];
        if (typeof c !== "object" || c === null) continue;
        values.push(c);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}
