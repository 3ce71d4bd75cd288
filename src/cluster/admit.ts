// admit: a node learns of the key or session a request presents before its front judges it. Keys and sessions are made
// and used on any node; the meta mirror may not hold one made elsewhere a moment ago, so it catches up first (bounded).
import { sessionToken } from "../auth/sessions.ts";
import type { compose } from "../compose.ts";
import { ApiError } from "../errors.ts";
import type { MetaMirror } from "./meta-mirror.ts";

/** how long a request waits at most for its session's use to be recorded in the bucket */
const RECORD_WAIT_MS = 2000;

export class Admission {
  constructor(
    private readonly front: ReturnType<typeof compose>,
    private readonly mirror: MetaMirror,
    /** the node reaches NATS: a mirror cut off from it has nothing to catch up with */
    private readonly ready: () => boolean,
  ) {}

  /** caller makes sure this node knows the request's key, if it presents one, or its web explorer session. */
  async caller({ headers, method }: Request): Promise<void> {
    if (!this.front.auth.presents(headers)) return this.session(headers, method);
    try {
      this.front.auth.authenticate(headers);
      return;
    } catch (e) {
      if (!(e instanceof ApiError) || e.code !== "AUTH_INVALID_API_KEY" || !this.ready()) return;
    }
    await this.mirror.catchUp().catch(() => false);
  }

  /**
   * session is caller for a web explorer session (contract §12): one this node does not know, or knows as ended, may
   * have been opened or used on another node a moment ago, so the meta mirror catches up first (bounded); a use is
   * recorded in the bucket (at most once a minute) before the request goes on, so every node knows of it after.
   */
  private async session(headers: Headers, method: string): Promise<void> {
    const token = sessionToken(headers);
    if (token === undefined || !(method === "GET" || headers.get("x-sluice-ui") === "1")) return; // what a session may authenticate (http/guard.ts)
    const now = this.front.clock();
    if (!this.ready()) return; // cut off from NATS: the session is judged by what this node holds
    if (!this.front.sessions.alive(token, now)) await this.mirror.catchUp().catch(() => false);
    // unrecorded, the use still counts here; one the bucket is slow to take (an election) is not waited for past 2 s
    await Promise.race([this.front.sessions.recordUse(token, now).catch(() => {}), Bun.sleep(RECORD_WAIT_MS)]);
  }

  /** knowsKey is caller for a key known by its hash (a read another node admitted). */
  async knowsKey(hash: string): Promise<void> {
    try {
      this.front.auth.authenticateHash(hash);
    } catch {
      if (this.ready()) await this.mirror.catchUp().catch(() => false);
    }
  }
}
