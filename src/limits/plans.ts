// plans: the plan table of contract §8. -1 means "none" for every limit.

export interface Plan {
  code: string;
  logs_per_month: number;
  log_retention_days: number;
  requests_per_minute: number;
  validate_requests_per_minute: number;
  max_log_size: number;
  max_batch_size: number;
  max_metadata_depth: number;
  max_tags: number;
}

export const BUILT_IN_PLANS: readonly Plan[] = [
  plan("free", 5_000, 21, 120, 30, 700, 50, 3, 5),
  plan("developer", 50_000, 45, 300, 60, 1_024, 200, 4, 10),
  plan("professional", 500_000, 120, 1_000, 200, 2_048, 1_000, 5, 20),
  plan("unlimited", -1, 3650, -1, -1, 65_536, 10_000, 10, 50),
];

function plan(code: string, ...n: [number, number, number, number, number, number, number, number]): Plan {
  const [logs_per_month, log_retention_days, requests_per_minute, validate_requests_per_minute, max_log_size, max_batch_size, max_metadata_depth, max_tags] = n;
  return {
    code,
    logs_per_month,
    log_retention_days,
    requests_per_minute,
    validate_requests_per_minute,
    max_log_size,
    max_batch_size,
    max_metadata_depth,
    max_tags,
  };
}

const MiB = 1024 * 1024;

/** limit reads a plan figure as a bound: -1 ("none") is no bound at all. */
export const limit = (n: number): number => (n < 0 ? Infinity : n);

/** maxBodyBytes is the largest request body a workspace on this plan may send (contract §4). */
export function maxBodyBytes(p: Plan): number {
  return Math.min(limit(p.max_batch_size) * limit(p.max_log_size) + 64 * 1024, 64 * MiB);
}

/** retentionFloorMs is the oldest server timestamp a read may still return on this plan. */
export function retentionFloorMs(p: Plan, nowMs: number): number {
  return p.log_retention_days < 0 ? -Infinity : nowMs - p.log_retention_days * 86_400_000;
}

/** PlanTable finds plans by code; unknown codes are a configuration problem, never a client one. */
export class PlanTable {
  private readonly byCode = new Map<string, Plan>();
  constructor(plans: readonly Plan[] = BUILT_IN_PLANS) {
    for (const p of plans) this.byCode.set(p.code, p);
  }
  has(code: string): boolean {
    return this.byCode.has(code);
  }
  get(code: string): Plan {
    const p = this.byCode.get(code);
    if (!p) throw new Error(`BUG: plan ${JSON.stringify(code)} is not in the plan table`);
    return p;
  }
  /** retentionFloor is retentionFloorMs of a plan by code; -Infinity (keep all) for a code the table lacks. */
  retentionFloor(code: string, nowMs: number): number {
    const p = this.byCode.get(code);
    return p ? retentionFloorMs(p, nowMs) : -Infinity;
  }
  codes(): string[] {
    return [...this.byCode.keys()];
  }
}
