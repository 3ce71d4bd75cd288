// byte-lru: values kept by name within a budget of bytes, the least recently used let go first.

/** ByteLru keeps values by name while their bytes fit its budget; a get makes a value the most recently used. */
export class ByteLru<V extends { byteLength: number }> {
  private readonly kept = new Map<string, V>();
  private held = 0;

  constructor(private readonly budget: number) {}

  /** bytes is what the kept values hold together. */
  get bytes(): number {
    return this.held;
  }

  get(name: string): V | undefined {
    const value = this.kept.get(name);
    if (value === undefined) return undefined;
    this.kept.delete(name); // to the end: the most recently used
    this.kept.set(name, value);
    return value;
  }

  /** set keeps `value` under `name`, then lets the least recently used go until the budget holds. */
  set(name: string, value: V): void {
    this.delete(name);
    this.kept.set(name, value);
    this.held += value.byteLength;
    for (const [oldest] of this.kept) {
      if (this.held <= this.budget) break;
      this.delete(oldest);
    }
  }

  delete(name: string): void {
    const value = this.kept.get(name);
    if (value === undefined) return;
    this.kept.delete(name);
    this.held -= value.byteLength;
  }
}
