// sessions: the web explorer's sign-in (contract §12). A session maps a random token, held by the browser in an
// HttpOnly cookie, to the hash of the key it was opened with; the key itself is never kept, by the browser or here.
// Sessions are stored (storage/records/sessions.ts): a restart keeps them, and in a cluster every node knows them.
import { createHash, randomBytes } from "node:crypto";
import { unauthorized } from "../errors.ts";
import type { SessionStore } from "../storage/records/sessions.ts";

/** the cookie that carries a session token */
export const SESSION_COOKIE = "sluice_session";
/** how long a session lasts at most, however busy (contract §12 is silent; a working day plus a margin) */
export const SESSION_MAX_MS = 12 * 60 * 60 * 1000;
/** how long a session lasts without a request */
export const SESSION_IDLE_MS = 2 * 60 * 60 * 1000;
/** how often a process records a session's use in the store at most: other nodes see its uses to this precision */
export const SESSION_RECORD_MS = 60_000;
/** open sessions of one key at most: past that, its oldest are closed (a flood of sign-ins cannot fill the store) */
export const SESSIONS_PER_KEY = 1000;
const SWEEP_MS = 60_000; // ended sessions are swept at a sign-in at most this often
const KEPT = 10_000; // sessions whose last use this process keeps in memory (past that the oldest are forgotten)

/** Sessions opens, checks and ends the web explorer's sessions. */
export class Sessions {
  /** per session this process answered: its last use here (exact) and when this process last recorded a use */
  private readonly uses = new Map<string, { usedMs: number; recordedMs: number }>();
  private sweptMs = Number.NEGATIVE_INFINITY;
  constructor(
    private readonly store: SessionStore,
    /** whether a key hash still opens a key (not revoked or deleted): the sweep closes the sessions of others */
    private readonly keyKnown: (keyHash: string) => boolean,
  ) {}

  /** start opens a session for a key (by its hash) and returns the token to put in the cookie, once stored. */
  async start(keyHash: string, nowMs: number): Promise<string> {
    const token = randomBytes(32).toString("base64url");
    const id = tokenHash(token);
    await this.store.open(id, keyHash, nowMs);
    this.used(id, nowMs); // its start is its first recorded use
    if (nowMs - this.sweptMs >= SWEEP_MS) {
      this.sweptMs = nowMs;
      void this.sweep(nowMs).catch(() => {}); // a sweep that fails is made again at a later sign-in
    }
    return token;
  }

  /**
   * keyHashOf is the key hash of a live session, or throws 401 when the session has ended. It marks the session used:
   * here at once, in the store at most once a minute (not awaited; a cluster front awaits it first: recordUse).
   */
  keyHashOf(token: string, nowMs: number): string {
    const id = tokenHash(token);
    const s = this.live(id, nowMs);
    if (!s) {
      throw unauthorized("AUTH_INVALID_API_KEY", "the session has ended (signed out, timed out or its key was revoked): sign in again with your API key");
    }
    if (this.used(id, nowMs)) void this.store.seen(id, nowMs).catch(() => this.uses.delete(id));
    return s.keyHash;
  }

  /** alive tells whether a token's session is live, without marking it used. */
  alive(token: string, nowMs: number): boolean {
    return this.live(tokenHash(token), nowMs) !== undefined;
  }

  /**
   * recordUse marks a live session used and, when this process has not recorded a use of it in the last minute,
   * records one in the store and resolves once stored: a cluster front awaits it before answering, so that the next
   * request, on whichever node, knows of the use.
   */
  async recordUse(token: string, nowMs: number): Promise<void> {
    const id = tokenHash(token);
    if (this.live(id, nowMs) && this.used(id, nowMs)) {
      await this.store.seen(id, nowMs).catch((e) => {
        this.uses.delete(id);
        throw e;
      });
    }
  }

  /** end closes a session, once stored (in a cluster: on every node); an unknown token is no error (signing out twice is fine). */
  async end(token: string): Promise<void> {
    const id = tokenHash(token);
    this.uses.delete(id);
    await this.store.close([id]);
  }

  /** sweep closes the stored sessions that have ended, whose key no longer opens, or past SESSIONS_PER_KEY of one key. */
  async sweep(nowMs: number): Promise<void> {
    const ended: string[] = [];
    const byKey = new Map<string, { id: string; startedMs: number }[]>();
    for (const s of this.store.all()) {
      // the last use recorded may be a minute behind another node's: a session is swept only once surely ended
      if (this.over(s.startedMs, s.seenMs + SESSION_RECORD_MS, nowMs) || !this.keyKnown(s.keyHash)) ended.push(s.id);
      else byKey.set(s.keyHash, [...(byKey.get(s.keyHash) ?? []), { id: s.id, startedMs: s.startedMs }]);
    }
    for (const open of byKey.values()) {
      if (open.length <= SESSIONS_PER_KEY) continue;
      open.sort((a, b) => a.startedMs - b.startedMs);
      ended.push(...open.slice(0, open.length - SESSIONS_PER_KEY).map((s) => s.id));
    }
    for (const id of ended) this.uses.delete(id);
    await this.store.close([...ended, ...this.store.strays()]);
  }

  /** live is a session that has not ended: not past its lifetime, and used (here, or as recorded) within the idle time. */
  private live(id: string, nowMs: number) {
    const s = this.store.get(id);
    if (!s) return undefined;
    return this.over(s.startedMs, Math.max(s.seenMs, this.uses.get(id)?.usedMs ?? 0), nowMs) ? undefined : s;
  }

  private over(startedMs: number, lastMs: number, nowMs: number): boolean {
    return nowMs - startedMs >= SESSION_MAX_MS || nowMs - lastMs >= SESSION_IDLE_MS;
  }

  /** used notes a use here; true when it is time to record one in the store (and notes it recorded). */
  private used(id: string, nowMs: number): boolean {
    const u = this.uses.get(id);
    const due = !u || nowMs - u.recordedMs >= SESSION_RECORD_MS;
    this.uses.delete(id); // re-inserted: the map's order is the order of last use, and the least recent is forgotten first
    this.uses.set(id, { usedMs: Math.max(nowMs, u?.usedMs ?? 0), recordedMs: due ? nowMs : u.recordedMs });
    if (this.uses.size > KEPT) this.uses.delete(this.uses.keys().next().value!);
    return due;
  }
}

const tokenHash = (token: string) => createHash("sha256").update(token).digest("base64url");

/** sessionToken is the session token in a Cookie header, if any. */
export function sessionToken(headers: Headers): string | undefined {
  const cookie = headers.get("cookie");
  if (!cookie) return undefined;
  for (const part of cookie.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) {
      const value = part.slice(eq + 1).trim();
      return value === "" ? undefined : value;
    }
  }
  return undefined;
}
