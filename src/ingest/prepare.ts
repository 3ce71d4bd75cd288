// prepare: a bulk body's bytes → blocks ready to store: parsed, checked, encoded and indexed, all but the
// ids, which only the main thread draws (they must increase across the process). No I/O and no shared
// state, so it runs on an ingest worker (prepare-worker.ts) for large bodies and inline for small ones.
import { requireKeyEnvironment } from "../auth/authenticate.ts";
import { badRequest, validationFailed, type FieldError } from "../errors.ts";
import { parseJson } from "./json.ts";
import type { EntryBounds, JsonBody } from "./scan.ts";
import { limit, type Plan } from "../limits/plans.ts";
import { isEnvironment, type Environment } from "../schema.ts";
import { BLOCK_MAX } from "../storage/format/block.ts";
import { encodeEntries, type EncodedBlock } from "../storage/format/encode.ts";
import { checkEntry, UNBOUNDED, type NewEntry } from "./rules.ts";

export interface PreparedBatch {
  count: number;
  blocks: EncodedBlock[];
}

/** prepareBatch runs every check of POST /logs/bulk on a body and encodes its blocks (encodeEntries' `splitWords`); it throws the ApiError to answer. */
export function prepareBatch(body: JsonBody, plan: Plan, keyEnvironment: Environment, splitWords = false): PreparedBatch {
  const entries = acceptBatch(parseJson(body.bytes), plan, keyEnvironment, body.bounds);
  const blocks: EncodedBlock[] = [];
  for (let i = 0; i < entries.length; i += BLOCK_MAX) {
    const block = entries.length <= BLOCK_MAX ? entries : entries.slice(i, i + BLOCK_MAX);
    blocks.push(encodeEntries(block, splitWords));
  }
  return { count: entries.length, blocks };
}

/** acceptBatch checks a bulk body's shape and size, then every entry (acceptEntries). */
export function acceptBatch(body: unknown, plan: Plan, keyEnvironment: Environment, bounds?: EntryBounds): NewEntry[] {
  if (!Array.isArray(body)) {
    throw badRequest("VALIDATION_INVALID_REQUEST", "POST /logs/bulk takes a JSON array of entries; send single objects to POST /logs");
  }
  if (body.length === 0) {
    throw validationFailed([{ field: "", message: "the batch is empty; send at least one entry", log_index: null }]);
  }
  const max = plan.max_batch_size;
  if (body.length > limit(max)) {
    throw badRequest("VALIDATION_BULK_LIMIT_EXCEEDED", `the batch has ${body.length} entries; the ${plan.code} plan allows ${max} per request: split it`, {
      max_batch_size: max,
      received: body.length,
    });
  }
  return acceptEntries(body, 0, plan, keyEnvironment, bounds);
}

/**
 * acceptEntries checks environments first (403), then every entry rule (400 listing all problems).
 * The bounds of each entry from the body's scan spare rules their work (checkEntry).
 */
export function acceptEntries(raws: unknown[], firstIndex: number | null, plan: Plan, keyEnvironment: Environment, bounds?: EntryBounds): NewEntry[] {
  for (const raw of raws) {
    const env = (raw as Record<string, unknown> | null)?.environment;
    if (isEnvironment(env)) requireKeyEnvironment(keyEnvironment, env);
  }
  const entries: NewEntry[] = [];
  const errors: FieldError[] = [];
  const known = bounds?.size.length === raws.length ? bounds : undefined; // a scan that saw other elements than JSON.parse did is not used
  raws.forEach((raw, i) => {
    const bound = known ? { size: known.size[i], nesting: known.nesting[i], surrogates: known.surrogates } : UNBOUNDED;
    const check = checkEntry(raw, firstIndex === null ? null : i, plan, bound);
    if (check.entry) entries.push(check.entry);
    else errors.push(...check.errors);
  });
  if (errors.length > 0) {
    const envProblem = errors.some((e) => e.field === "environment");
    throw validationFailed(errors, envProblem ? "VALIDATION_INVALID_ENVIRONMENT" : "VALIDATION_FAILED");
  }
  return entries;
}
