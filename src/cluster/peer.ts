// peer: a read forwarded to another node's copy straight over HTTP, one hop each way instead of two through
// nats-server; NATS carries it when the peer cannot be reached. A node proves it belongs to the cluster with the
// cluster's peer secret (kept in the cluster bucket: whoever can read that bucket is the cluster's operator anyway).
import { timingSafeEqual } from "node:crypto";
import type { RelayedRequest } from "./relay.ts";

/** the path a node answers peers' reads on, followed by /<partition> */
export const PEER_READ_PATH = "/_sluice/peer/read/";
const SECRET_HEADER = "x-sluice-peer";
/** how long a peer whose address could not be reached is left to NATS */
const SHUN_MS = 30_000;

/** PeerHttp sends reads to peers' addresses and tells a peer's request from anyone else's. */
export class PeerHttp {
  /** the secret as a header carries it, and its bytes for the constant-time comparison */
  private readonly header: string;
  private readonly secret: Uint8Array;
  /** peers' addresses that could not be reached, until when they are left to NATS */
  private readonly shunned = new Map<string, number>();

  constructor(secret: string) {
    this.header = secret;
    this.secret = new TextEncoder().encode(secret);
  }

  /**
   * ask posts a packed read for partition p to the node at `url` and resolves with its packed answer, or undefined
   * when that node cannot answer it (unreachable, or it holds no copy of p now): the read then goes through NATS.
   */
  async ask(url: string, p: number, read: Uint8Array, timeoutMs: number): Promise<Uint8Array | undefined> {
    if ((this.shunned.get(url) ?? 0) > Date.now()) return undefined;
    let answer: Response;
    try {
      answer = await fetch(`${url}${PEER_READ_PATH}${p}`, {
        method: "POST",
        headers: { [SECRET_HEADER]: this.header, "content-type": "application/x-msgpack" },
        body: read,
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (e) {
      if ((e as Error).name === "TimeoutError") throw e; // the copy took the read and ran out of time: not run again
      this.shunned.set(url, Date.now() + SHUN_MS);
      return undefined;
    }
    if (answer.status !== 200) {
      await answer.body?.cancel();
      return undefined;
    }
    return new Uint8Array(await answer.arrayBuffer());
  }

  /** fromPeer tells whether a request carries the cluster's peer secret (compared in constant time). */
  fromPeer(request: Request): boolean {
    const given = new TextEncoder().encode(request.headers.get(SECRET_HEADER) ?? "");
    return given.byteLength === this.secret.byteLength && timingSafeEqual(given, this.secret);
  }
}

/** isRelayedRequest tells whether a decoded peer's body has a relayed read's shape. */
export function isRelayedRequest(x: unknown): x is RelayedRequest {
  if (typeof x !== "object" || x === null) return false;
  const r = x as Record<string, unknown>;
  return (
    typeof r.method === "string" &&
    typeof r.url === "string" &&
    Array.isArray(r.headers) &&
    r.headers.every((h) => Array.isArray(h) && h.length === 2 && typeof h[0] === "string" && typeof h[1] === "string") &&
    (r.body === null || r.body instanceof Uint8Array) &&
    typeof r.barrier === "number" &&
    (r.keyHash === undefined || typeof r.keyHash === "string") &&
    (r.early === undefined || typeof r.early === "boolean")
  );
}
