// ingest: turns received bodies into stored entries (POST /logs, /logs/bulk) or a dry-run report (/logs/validate).
import type { Caller } from "../auth/authenticate.ts";
import { ApiError, badRequest, validationFailed, type FieldError } from "../errors.ts";
import { IdGenerator } from "../ids.ts";
import { limit } from "../limits/plans.ts";
import { quotaExceeded } from "../limits/quota.ts";
import type { JsonBody } from "../http/body.ts";
import type { EntryBounds } from "../http/scan.ts";
import { isEnvironment, type LogEntry } from "../schema.ts";
import { toLogEntry, type Entry, type EntryStore } from "../storage/entries.ts";
import { acceptEntries } from "./prepare.ts";
import { preparer } from "./preparer.ts";
import { checkEntry, unknownFields, type NewEntry } from "./rules.ts";

/** IngestService validates and stores entries for one caller at a time. */
export class IngestService {
  private readonly ids = new IdGenerator();
  constructor(private readonly store: EntryStore, private readonly clock: () => number = Date.now) {}

  /** createOne stores a single entry and returns it as stored; bounds are its body's scan's (checkEntry). */
  async createOne(body: unknown, caller: Caller, bounds?: EntryBounds): Promise<LogEntry> {
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw badRequest("VALIDATION_INVALID_REQUEST", "POST /logs takes one JSON object; send arrays to POST /logs/bulk");
    }
    const [entry] = acceptEntries([body], null, caller.plan, caller.key.environment, bounds);
    const { ms, stored } = await this.write([entry], caller);
    return toLogEntry(caller.key.environment, ms, stored[0]);
  }

  /** createMany checks a bulk body (unparsed), stores it all or nothing and returns the new ids in input order. */
  async createMany(body: JsonBody, caller: Caller): Promise<{ count: number; ids: string[] }> {
    const batch = await preparer().prepare(body, caller.plan, caller.key.environment);
    const { ms, ids } = this.ids.next(batch.count, this.clock());
    await this.commit(caller, batch.count, ms, () => this.store.appendPrepared(caller.workspace.id, caller.key.environment, ms, ids, batch.blocks, caller.plan.logs_per_month));
    return { count: batch.count, ids };
  }

  /** validate runs every check of a write and stores nothing. */
  validate(body: unknown, caller: Caller): { valid: boolean; warnings: string[]; errors: FieldError[] } {
    if (typeof body !== "object" || body === null) {
      throw badRequest("VALIDATION_INVALID_REQUEST", "send one entry object or an array of entries");
    }
    const batch = Array.isArray(body);
    const raws: unknown[] = batch ? body : [body];
    const errors: FieldError[] = [];
    const warnings: string[] = [];
    if (batch && raws.length === 0) errors.push({ field: "", message: "the batch is empty; send at least one entry", log_index: null });
    else if (batch && raws.length > limit(caller.plan.max_batch_size)) {
      errors.push({ field: "", message: `the batch has ${raws.length} entries; the ${caller.plan.code} plan allows ${caller.plan.max_batch_size}`, log_index: null });
    } else {
      raws.forEach((raw, i) => {
        const index = batch ? i : null;
        const check = checkEntry(raw, index, caller.plan);
        errors.push(...check.errors);
        const env = (raw as Record<string, unknown> | null)?.environment;
        if (isEnvironment(env) && env !== caller.key.environment) {
          errors.push({ field: "environment", message: `environment ${env} does not match this key's environment ${caller.key.environment}`, log_index: index });
        }
        for (const f of unknownFields(raw)) warnings.push(`${index === null ? "" : `entry ${index}: `}unknown field ${JSON.stringify(f)} is ignored`);
      });
    }
    return { valid: errors.length === 0, warnings, errors };
  }

  /** write commits the entries, or nothing when they would pass the monthly quota (checked in the same transaction). */
  private async write(entries: NewEntry[], caller: Caller): Promise<{ ms: number; stored: Entry[] }> {
    const { ms, ids } = this.ids.next(entries.length, this.clock());
    const stored = entries.map((e, i): Entry => ({
      id: ids[i], level: e.level, action: e.action, message: e.message, tags: e.tags, clientMs: e.clientMs,
      actor: e.actor, target: e.target, context: e.context, metadata: e.metadata,
    }));
    await this.commit(caller, entries.length, ms, () => this.store.append(caller.workspace.id, caller.key.environment, ms, stored, caller.plan.logs_per_month));
    return { ms, stored };
  }

  /** commit runs a store write and turns its failure or quota verdict into the answer's error. */
  private async commit(caller: Caller, count: number, ms: number, append: () => Promise<{ stored: boolean; used: number }>): Promise<void> {
    let verdict: { stored: boolean; used: number };
    try {
      verdict = await append();
    } catch (e) {
      throw new ApiError(500, "INTERNAL_LOG_SERVICE_ERROR", "the entries could not be stored; nothing was written, retry later", undefined, undefined, e);
    }
    if (!verdict.stored) throw quotaExceeded(caller.plan, verdict.used, count, ms);
  }
}
