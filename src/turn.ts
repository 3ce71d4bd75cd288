// turn: a value read at most once an event-loop turn, for reads that every request of a turn would repeat.

/**
 * PerTurn holds what `read` gave for the rest of the event-loop turn: the turn's I/O callbacks and their promises
 * share it, and the first get after the turn's setImmediate phase reads again.
 */
export class PerTurn<T> {
  private value: T | undefined;
  private held = false;

  constructor(private readonly read: () => T) {}

  get(): T {
    if (!this.held) {
      this.value = this.read();
      this.held = true;
      setImmediate(() => this.forget());
    }
    return this.value as T;
  }

  /** forget makes the next get read again, within the turn too (after a write that changes what read gives). */
  forget(): void {
    this.held = false;
    this.value = undefined;
  }
}
