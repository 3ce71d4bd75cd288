// ingest: turns received bodies into stored entries (POST /logs, /logs/bulk) or a dry-run report (/logs/validate).
import type { Caller } from "../auth/authenticate.ts";
import { ApiError, badRequest, type FieldError } from "../errors.ts";
import { IdGenerator } from "../ids.ts";
import { PerTurn } from "../turn.ts";
import { limit } from "../limits/plans.ts";
import { quotaExceeded } from "../limits/quota.ts";
import type { EntryBounds, JsonBody } from "./scan.ts";
import { isEnvironment } from "../schema.ts";
import type { Verdict } from "../storage/commit.ts";
import type { EncodedBlock } from "../storage/format/encode.ts";
import type { Entry, Row } from "../storage/entries.ts";
import type { Tenant } from "../storage/keys.ts";
import { StorageFull } from "../storage/disk.ts";
import { acceptEntries } from "./prepare.ts";
import { Preparer } from "./preparer.ts";
import { checkEntry, unknownFields } from "./rules.ts";
import type { Item } from "./protocols/item.ts";
import { checkItems, type ShippedBatch, type ShippedBody } from "./shipped.ts";

/** ShippedResult is what a protocol request stored: ids of the stored entries in request order, and the rejected. */
export type ShippedResult = Omit<ShippedBatch, "blocks"> & { ids: string[] };

/**
 * Keyed is a sink's verdict: the store's, or (cluster) the log's, which may have stored the write with other ids (and
 * a later server millisecond) than those drawn here (`rekeyed`): its key had to follow an entry another front wrote first.
 */
export type Keyed = Verdict & { rekeyed?: { ms: number; ids: string[] } };

/** WriteSink is where accepted writes go: the entry store, or (cluster) the partition's log. */
export interface WriteSink {
  append(tenant: Tenant, serverMs: number, entries: Entry[], monthlyLimit: number): Promise<Keyed>;
  appendPrepared(tenant: Tenant, serverMs: number, ids: string[], blocks: EncodedBlock[], monthlyLimit: number): Promise<Keyed>;
}

/** IngestService validates and stores entries for one caller at a time. */
export class IngestService {
  private readonly ids = new IdGenerator();
  /** checks and encodes bulk bodies, large ones on its own worker thread */
  private readonly preparer: Preparer;
  /**
   * The clock read once an event-loop turn. Every request a turn handles had arrived before the turn read it, so it
   * is each one's receipt time; sharing it, the single writes of a turn commit as one block (commit.ts).
   */
  private readonly received = new PerTurn(() => this.clock());
  constructor(
    private readonly store: WriteSink,
    private readonly clock: () => number = Date.now,
    /** split the full-text words where blocks are encoded: the store sends them to several copies (a cluster) */
    splitWords = false,
  ) {
    this.preparer = new Preparer(splitWords);
  }

  /** createOne stores a single entry and returns it as stored; bounds are its body's scan's (checkEntry). */
  async createOne(body: unknown, caller: Caller, bounds?: EntryBounds): Promise<Row> {
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw badRequest("VALIDATION_INVALID_REQUEST", "POST /logs takes one JSON object; send arrays to POST /logs/bulk");
    }
    const [e] = acceptEntries([body], null, caller.plan, caller.key.environment, bounds);
    const { ms, ids } = this.ids.next(1, this.received.get());
    const entry: Entry = {
      id: ids[0],
      level: e.level,
      action: e.action,
      message: e.message,
      tags: e.tags,
      clientMs: e.clientMs,
      actor: e.actor,
      target: e.target,
      context: e.context,
      metadata: e.metadata,
    };
    const { rekeyed } = await this.commit(caller, 1, ms, () => this.store.append(tenantOf(caller), ms, [entry], caller.plan.logs_per_month));
    return rekeyed ? { serverMs: rekeyed.ms, entry: { ...entry, id: rekeyed.ids[0] } } : { serverMs: ms, entry };
  }

  /** createMany checks a bulk body (unparsed), stores it all or nothing and returns the new ids in input order. */
  async createMany(body: JsonBody, caller: Caller): Promise<{ count: number; ids: string[] }> {
    const batch = await this.preparer.prepare(body, caller.plan, caller.key.environment);
    const { ms, ids } = this.ids.next(batch.count, this.clock());
    const { rekeyed } = await this.commit(caller, batch.count, ms, () =>
      this.store.appendPrepared(tenantOf(caller), ms, ids, batch.blocks, caller.plan.logs_per_month),
    );
    return { count: batch.count, ids: rekeyed?.ids ?? ids };
  }

  /**
   * createShipped stores the entries of a protocol request (contract §11) that pass the entry rules, all in one
   * write, and reports the others; a decode failure (400) or the quota (429) stores nothing.
   */
  async createShipped(body: ShippedBody, caller: Caller): Promise<ShippedResult> {
    return this.storeBatch(await this.preparer.prepareShipped(body, caller.plan), caller);
  }

  /** createItems is createShipped for entries already decoded (the syslog listener's lines). */
  createItems(items: Item[], caller: Caller): Promise<ShippedResult> {
    return this.storeBatch(checkItems(items, caller.plan), caller);
  }

  private async storeBatch(batch: ShippedBatch, caller: Caller): Promise<ShippedResult> {
    const { blocks, ...outcome } = batch;
    if (batch.count === 0) return { ...outcome, ids: [] };
    const { ms, ids } = this.ids.next(batch.count, this.clock());
    const { rekeyed } = await this.commit(caller, batch.count, ms, () =>
      this.store.appendPrepared(tenantOf(caller), ms, ids, blocks, caller.plan.logs_per_month),
    );
    return { ...outcome, ids: rekeyed?.ids ?? ids };
  }

  /** close ends the ingest worker thread, once no write is under way. */
  close(): Promise<void> {
    return this.preparer.close();
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
      errors.push({
        field: "",
        message: `the batch has ${raws.length} entries; the ${caller.plan.code} plan allows ${caller.plan.max_batch_size}`,
        log_index: null,
      });
    } else {
      raws.forEach((raw, i) => {
        const index = batch ? i : null;
        const check = checkEntry(raw, index, caller.plan);
        errors.push(...check.errors);
        const env = (raw as Record<string, unknown> | null)?.environment;
        if (isEnvironment(env) && env !== caller.key.environment) {
          errors.push({
            field: "environment",
            message: `environment ${env} does not match this key's environment ${caller.key.environment}`,
            log_index: index,
          });
        }
        for (const f of unknownFields(raw)) warnings.push(`${index === null ? "" : `entry ${index}: `}unknown field ${JSON.stringify(f)} is ignored`);
      });
    }
    return { valid: errors.length === 0, warnings, errors };
  }

  /** commit runs a store write and turns its failure or quota verdict into the answer's error; the quota is checked in the write's transaction. */
  private async commit(caller: Caller, count: number, ms: number, append: () => Promise<Keyed>): Promise<Keyed> {
    let verdict: Keyed;
    try {
      verdict = await append();
    } catch (e) {
      if (e instanceof ApiError) throw e; // the sink's own answer (cluster: 503 while the log is unreachable)
      if (e instanceof StorageFull)
        throw new ApiError(503, "INTERNAL_LOG_SERVICE_ERROR", e.message, { reason: "storage_full" }, { "retry-after": String(FULL_RETRY_SECONDS) }, e);
      throw new ApiError(500, "INTERNAL_LOG_SERVICE_ERROR", "the entries could not be stored; nothing was written, retry later", undefined, undefined, e);
    }
    if (!verdict.stored) throw quotaExceeded(caller.plan, verdict.used, count, ms);
    return verdict;
  }
}

/** FULL_RETRY_SECONDS is the Retry-After of a write refused by a full disk: about how soon freed space is noticed. */
const FULL_RETRY_SECONDS = 10;

/** tenantOf names the entries a caller writes: its key's environment of its workspace. */
const tenantOf = (caller: Caller): Tenant => ({ ws: caller.workspace.id, env: caller.key.environment });
