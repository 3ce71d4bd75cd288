// buckets: token buckets (capacity = the per-minute figure, refilled evenly), kept in bounded memory.
//
// Tokens are counted in integer units of 1/60,000 of a token: a bucket refills `perMinute` units
// per millisecond, so refill is exact (no floating drift) and one token costs 60,000 units.

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
  units: number;
  at: number; // ms of the last refill
}

const TOKEN = 60_000; // units per token

/**
 * Buckets holds one bucket per name (a key id, a client IP). A bucket idle for a minute has
 * refilled completely, the same as a new one, so idle buckets may be forgotten: names live in a
 * young and an old generation; the old one is dropped when the young one has lived a minute
 * (everything in it then idle for over a minute) or holds half the cap (a flood of names).
 */
export class Buckets {
  private young = new Map<string, Bucket>();
  private old = new Map<string, Bucket>();
  private youngSince = -Infinity;

  constructor(private readonly maxEntries = 100_000) {}

  /** take spends a token from name's bucket if it has one; with spend false it only looks. */
  take(name: string, perMinute: number, nowMs: number, spend = true): BucketState {
    const full = perMinute * TOKEN;
    const b = this.bucket(name, full, nowMs);
    b.units = Math.min(full, b.units + Math.max(0, nowMs - b.at) * perMinute);
    b.at = Math.max(b.at, nowMs);
    const allowed = b.units >= TOKEN;
    if (allowed && spend) b.units -= TOKEN;
    return {
      allowed,
      limit: perMinute,
      remaining: Math.floor(b.units / TOKEN),
      resetAt: Math.ceil((nowMs + (full - b.units) / perMinute) / 1000),
      retryAfter: Math.max(1, Math.ceil((TOKEN - b.units) / perMinute / 1000)),
    };
  }

  /** size is the number of buckets held (for tests of the memory bound). */
  get size(): number {
    return this.young.size + this.old.size;
  }

  private bucket(name: string, full: number, nowMs: number): Bucket {
    if (nowMs - this.youngSince >= 60_000 || this.young.size >= this.maxEntries / 2) {
      this.old = this.young;
      this.young = new Map();
      this.youngSince = nowMs;
    }
    let b = this.young.get(name);
    if (b) return b;
    b = this.old.get(name) ?? { units: full, at: nowMs };
    this.old.delete(name);
    this.young.set(name, b);
    return b;
  }
}
