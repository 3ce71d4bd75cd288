// plans: in a cluster each node counts requests on its own, so a plan's requests per minute are shared among the live
// front nodes (contract §13: approximate by design); the monthly quota and every other figure stay whole.
import { PlanTable, type Plan } from "../limits/plans.ts";

/** share is a node's part of a per-minute figure among `fronts` nodes: rounded up, never below 1; -1 (none) stays. */
export function share(perMinute: number, fronts: number): number {
  return perMinute < 0 || fronts <= 1 ? perMinute : Math.max(1, Math.ceil(perMinute / fronts));
}

/** SharedPlans is a plan table whose rate figures are divided by the live front nodes, as the node last counted them. */
export class SharedPlans extends PlanTable {
  private fronts = 1;
  private readonly shared = new Map<string, Plan>();

  constructor(table: PlanTable) {
    super(table.codes().map((code) => table.get(code)));
  }

  /** setFronts records how many front nodes are live (at least 1: this one). */
  setFronts(n: number): void {
    const fronts = Math.max(1, n);
    if (fronts === this.fronts) return;
    this.fronts = fronts;
    this.shared.clear();
  }

  get liveFronts(): number {
    return this.fronts;
  }

  override get(code: string): Plan {
    const whole = super.get(code);
    if (this.fronts <= 1) return whole;
    let p = this.shared.get(code);
    if (!p) {
      p = {
        ...whole,
        requests_per_minute: share(whole.requests_per_minute, this.fronts),
        validate_requests_per_minute: share(whole.validate_requests_per_minute, this.fronts),
      };
      this.shared.set(code, p);
    }
    return p;
  }
}
