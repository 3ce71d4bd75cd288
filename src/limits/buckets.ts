// buckets: token buckets (capacity = the per-minute figure, refilled evenly), kept in a map of bounded size.

/** BucketState is what a caller learns from one attempt: enough for the X-RateLimit-* headers. */
export interface BucketState {
  allowed: boolean;
  limit: number;
  /** whole tokens left after this attempt */
  remaining: number;
  /** Unix seconds at which the bucket is full again */
  resetAt: number;
  /** seconds until one token is back (≥ 1), for Retry-After */
  retryAfter: number;
}

interface Bucket {
  tokens: number;
  at: number; // ms of the last refill
}

/**
 * Buckets holds one bucket per name (a key id, a client IP) at `perMinute` capacity.
 * A bucket that has refilled completely is the same as a new one, so idle buckets are evicted:
 * memory stays bounded however many distinct names pass by.
 */
export class Buckets {
  private readonly map = new Map<string, Bucket>();
  private sinceSweep = 0;

  constructor(private readonly maxEntries = 100_000) {}

  /** take spends a token from name's bucket if it has one; with spend false it only looks. */
  take(name: string, perMinute: number, nowMs: number, spend = true): BucketState {
    const rate = perMinute / 60_000; // tokens per ms
    const b = this.refilled(name, perMinute, rate, nowMs);
    const allowed = b.tokens >= 1;
    if (allowed && spend) b.tokens -= 1;
    this.map.delete(name); // re-insert: the map's order is least recently used first
    this.map.set(name, b);
    if (++this.sinceSweep >= 1024 || this.map.size > this.maxEntries) this.sweep(nowMs);
    const missing = perMinute - b.tokens;
    return {
      allowed,
      limit: perMinute,
      remaining: Math.floor(b.tokens),
      resetAt: Math.ceil((nowMs + missing / rate) / 1000),
      retryAfter: Math.max(1, Math.ceil((1 - b.tokens) / rate / 1000)),
    };
  }

  /** size is the number of buckets held (for tests of the memory bound). */
  get size(): number {
    return this.map.size;
  }

  private refilled(name: string, perMinute: number, rate: number, nowMs: number): Bucket {
    const b = this.map.get(name);
    if (!b) return { tokens: perMinute, at: nowMs };
    const elapsed = Math.max(0, nowMs - b.at);
    return { tokens: Math.min(perMinute, b.tokens + elapsed * rate), at: Math.max(b.at, nowMs) };
  }

  /** sweep drops buckets idle for a full minute (full again), then the least recently used over the cap. */
  private sweep(nowMs: number): void {
    this.sinceSweep = 0;
    for (const [name, b] of this.map) {
      if (nowMs - b.at < 60_000) break; // the rest were used more recently
      this.map.delete(name);
    }
    for (const name of this.map.keys()) {
      if (this.map.size <= this.maxEntries) break;
      this.map.delete(name);
    }
  }
}
