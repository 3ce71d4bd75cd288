// placement: which rules this Sluice evaluates and which notices it sends (contract §16). One process evaluates every
// rule; in a cluster each partition copy evaluates the rules of its partition's workspaces while its node owns them.
import type { StoredNotice } from "../storage/records/alerts.ts";

/** Placement tells an evaluator and a deliverer what is theirs; without one, everything is. */
export interface Placement {
  /** active is false while nothing here is to be evaluated or sent (checked first, it saves reading the rules) */
  active(): boolean;
  /** owns tells whether this Sluice evaluates the rules of workspace ws and sends their notices now */
  owns(ws: string): boolean;
  /** ready resolves once this Sluice's entries and alert records are current; false: evaluate at a later tick */
  ready(): Promise<boolean>;
  /** sendable tells whether a notice may leave now: the record of it is shared, so a taking-over owner knows of it */
  sendable(n: StoredNotice): boolean;
}

/** EVERYWHERE is the placement of one process: every rule and notice is its own. */
export const EVERYWHERE: Placement = {
  active: () => true,
  owns: () => true,
  ready: async () => true,
  sendable: () => true,
};
