// turn: work done once an event-loop turn: a value read once for all the requests of a turn (PerTurn), and items
// gathered during a turn and handled together at its end (TurnQueue), such as the access log's lines (lineLog).

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

/** TurnQueue gathers the items pushed during an event-loop turn and hands them to `drain` together once the turn ends. */
export class TurnQueue<T> {
  private items: T[] = [];

  constructor(private readonly drain: (items: T[]) => void) {}

  push(item: T): void {
    if (this.items.length === 0) setImmediate(() => this.flush());
    this.items.push(item);
  }

  private flush(): void {
    const items = this.items;
    this.items = [];
    this.drain(items);
  }
}

/** lineLog prints JSON lines on stdout in one write an event-loop turn, however many requests the turn answered. */
export function lineLog(): (line: Record<string, unknown>) => void {
  const lines = new TurnQueue<string>((turn) => console.log(turn.join("\n")));
  return (line) => lines.push(JSON.stringify(line));
}
