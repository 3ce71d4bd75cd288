// slice: a read works in short slices and gives the event loop back between them, so that writes, health checks
// and other reads are answered while a long scan runs; once it has run past its time budget it stops with a 400.
import { badRequest, type ApiError } from "../errors.ts";

/** SLICE_MS is how long a read works before it lets the requests that arrived meanwhile run. */
export const SLICE_MS = 5;

/** Slice is what a sliced read asks: whether its slice is used up, and to pause (which may throw once over budget). */
export interface Slice {
  due: () => boolean;
  pause(): Promise<void>;
}

/** TimeSlicer slices one read by the clock and holds it to a budget of wall time, pauses included. */
export class TimeSlicer implements Slice {
  private readonly deadline: number;
  private until: number;

  constructor(
    private readonly budgetMs: number,
    private readonly sliceMs = SLICE_MS,
    private readonly clock: () => number = () => performance.now(),
  ) {
    const now = clock();
    this.deadline = now + budgetMs;
    this.until = Math.min(now + sliceMs, this.deadline);
  }

  /** due tells whether the slice is used up: one clock reading. */
  readonly due = (): boolean => this.clock() >= this.until;

  /** pause lets the event loop run (other requests, commits), then starts the next slice; past the budget it throws instead. */
  async pause(): Promise<void> {
    if (this.clock() >= this.deadline) throw overBudget(this.budgetMs);
    // one turn lets I/O in; the second runs what that I/O queued for the next turn (a turn's commit, answers) before the scan goes on
    await nextTurn();
    await nextTurn();
    this.until = Math.min(this.clock() + this.sliceMs, this.deadline);
  }
}

/** PacedSlice holds one read to its own budget of wall time while it works in the slices of `pace`, a longer task's:
 * the reads of that task share its slices, so a run of short reads gives the event loop back as a long read does. */
export class PacedSlice implements Slice {
  private readonly deadline: number;

  constructor(
    private readonly pace: Slice,
    private readonly budgetMs: number,
    private readonly clock: () => number = () => performance.now(),
  ) {
    this.deadline = clock() + budgetMs;
  }

  /** due tells whether the pace's slice is used up. */
  readonly due = (): boolean => this.pace.due();

  /** pause lets the event loop run as the pace does; past this read's budget it throws instead. */
  async pause(): Promise<void> {
    if (this.clock() >= this.deadline) throw overBudget(this.budgetMs);
    await this.pace.pause();
  }
}

/** overBudget is the answer to a read that ran past its time budget: what happened and how to narrow the read. */
export function overBudget(budgetMs: number): ApiError {
  return badRequest(
    "VALIDATION_QUERY_CONSTRAINT",
    `the query ran past its time budget of ${budgetMs} ms (SLUICE_QUERY_TIMEOUT_SECONDS) before its page was complete; ` +
      "narrow it: a shorter from/to range, or a term an index answers (level=, tag=, action=, or a word of the message such as message@timeout)",
    { reason: "time_budget", budget_ms: budgetMs },
  );
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
