// watermark: a number that only rises (a sequence applied, a revision mirrored), and waits for it to reach a value.

/** Watermark holds the highest value seen and resolves the waits it has reached. */
export class Watermark {
  private readonly waiters = new Set<{ target: number; resolve: (reached: boolean) => void; timer: ReturnType<typeof setTimeout> }>();
  constructor(public value = 0) {}

  /** advance raises the value to v (never lowers it) and resolves every wait it reaches. */
  advance(v: number): void {
    if (v <= this.value) return;
    this.value = v;
    for (const w of this.waiters) {
      if (w.target > v) continue;
      this.waiters.delete(w);
      clearTimeout(w.timer);
      w.resolve(true);
    }
  }

  /** reached resolves true once the value is at least target, false after timeoutMs. */
  reached(target: number, timeoutMs: number): Promise<boolean> {
    if (this.value >= target) return Promise.resolve(true);
    return new Promise((resolve) => {
      const w = {
        target,
        resolve,
        timer: setTimeout(() => {
          this.waiters.delete(w);
          resolve(false);
        }, timeoutMs),
      };
      this.waiters.add(w);
    });
  }
}
