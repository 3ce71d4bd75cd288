// sessions: the web explorer's sign-in (contract §12). A session maps a random token, held by the browser in an
// HttpOnly cookie, to the hash of the key it was opened with; the key itself is never kept, by the browser or here.
import { createHash, randomBytes } from "node:crypto";
import { unauthorized } from "../errors.ts";

/** the cookie that carries a session token */
export const SESSION_COOKIE = "sluice_session";
/** how long a session lasts at most, however busy (contract §12 is silent; a working day plus a margin) */
export const SESSION_MAX_MS = 12 * 60 * 60 * 1000;
/** how long a session lasts without a request */
export const SESSION_IDLE_MS = 2 * 60 * 60 * 1000;
const MAX_SESSIONS = 10_000; // past that the oldest is dropped: a flood of sign-ins cannot fill memory

interface Session {
  keyHash: string;
  startedMs: number;
  lastMs: number;
}

/** Sessions holds the open sessions of this process in memory: a restart signs everyone out. */
export class Sessions {
  private readonly open = new Map<string, Session>();

  /** start opens a session for a key (by its hash) and returns the token to put in the cookie. */
  start(keyHash: string, nowMs: number): string {
    const token = randomBytes(32).toString("base64url");
    if (this.open.size >= MAX_SESSIONS) this.open.delete(this.open.keys().next().value!);
    this.open.set(tokenHash(token), { keyHash, startedMs: nowMs, lastMs: nowMs });
    return token;
  }

  /** keyHashOf is the key hash of a live session (and marks it used), or throws 401 when the session has ended. */
  keyHashOf(token: string, nowMs: number): string {
    const id = tokenHash(token);
    const s = this.open.get(id);
    if (!s || nowMs - s.startedMs >= SESSION_MAX_MS || nowMs - s.lastMs >= SESSION_IDLE_MS) {
      this.open.delete(id);
      throw unauthorized("AUTH_INVALID_API_KEY", "the session has ended (signed out, timed out or the server restarted): sign in again with your API key");
    }
    s.lastMs = nowMs;
    return s.keyHash;
  }

  /** end closes a session; an unknown token is no error (signing out twice is fine). */
  end(token: string): void {
    this.open.delete(tokenHash(token));
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
