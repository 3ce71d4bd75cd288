// pace: the slices of the event loop a round of evaluations works in. Evaluations are background work: a round works
// 1 ms, lets the event loop turn, and then lets the writes under way commit and be answered before its next slice.
import type { Slice } from "../query/slice.ts";

/** Writes is what the pace needs of the writes under way (storage/inflight.ts). */
export interface Writes {
  busy(): boolean;
  nextSettled(): Promise<void>;
}

/** the longest a pause waits for writes: under writes that never stop, a round still gets a share of the event loop */
const WRITES_FIRST_MS = 10;

/** RoundPace is the slices a round's evaluations share, so that a run of short ones gives the event loop back as a long one does. */
export class RoundPace implements Slice {
  private until = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly writes: Writes,
    private readonly sliceMs: number,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** due tells whether the slice is used up: one clock reading. */
  readonly due = (): boolean => this.clock() >= this.until;

  /** pause lets the event loop turn twice (I/O in, then what it queued), then waits while writes are under way and answered, up to WRITES_FIRST_MS. */
  async pause(): Promise<void> {
    await nextTurn();
    await nextTurn();
    const deadline = this.clock() + WRITES_FIRST_MS;
    while (this.writes.busy() && this.clock() < deadline) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const left = Math.max(0, deadline - this.clock()); // the clock moves on after the loop's test: never a negative timeout
      await Promise.race([this.writes.nextSettled(), new Promise<void>((resolve) => (timer = setTimeout(resolve, left)))]);
      clearTimeout(timer);
      await nextTurn(); // the answered writes' own continuations (their responses) run before the next slice
    }
    this.until = this.clock() + this.sliceMs;
  }
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
