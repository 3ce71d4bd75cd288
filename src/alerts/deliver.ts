// deliver: sends the notices of the outbox (contract §16). A notice is stored in the transaction that decided it and
// leaves the outbox only once delivered or given up, so a restart (kill -9 included) resumes what was not settled.
// A network error or a 5xx is retried with backoff: attempts at 0, 1, 3, 7, 15 and 31 s, six within a minute.
import type { AlertStore, NoticePayload, StoredNotice } from "../storage/records/alerts.ts";
import type { Channel } from "./channels.ts";
import { EVERYWHERE, type Placement } from "./placement.ts";
import { alertmanagerBody, signature, slackBody, summaryLines, webhookBody } from "./notices.ts";

const MAX_ATTEMPTS = 6;
const ATTEMPT_TIMEOUT_MS = 10_000;
const POLL_MS = 250;

/** Outcome is how one attempt went: `retry` when it may succeed later (network error, 5xx). */
export interface Outcome {
  ok: boolean;
  status: number | null;
  error: string | null;
  retry: boolean;
}

/** SendMail sends one email (email.ts); kept apart so that the SMTP client loads only when an email channel is used. */
export type SendMail = (config: Record<string, unknown>, subject: string, text: string) => Promise<void>;

/** sendNotice makes one attempt to deliver a notice to a channel. */
export async function sendNotice(channel: Channel, n: Pick<StoredNotice, "payload">, externalUrl: string, nowMs: number, sendMail: SendMail): Promise<Outcome> {
  const c = channel.config;
  try {
    switch (channel.type) {
      case "webhook": {
        const body = JSON.stringify(webhookBody(n.payload, channel.name, externalUrl));
        const headers: Record<string, string> = { "content-type": "application/json", ...((c.headers as Record<string, string>) ?? {}) };
        if (typeof c.secret === "string") headers["x-sluice-signature"] = signature(c.secret, body);
        return await post(c.url as string, body, headers);
      }
      case "slack":
        return await post(c.url as string, JSON.stringify(slackBody(n.payload)), { "content-type": "application/json" });
      case "alertmanager":
        return await post(
          `${(c.url as string).replace(/\/$/, "")}/api/v2/alerts`,
          JSON.stringify(alertmanagerBody(n.payload, Math.max(5 * 60_000, 3 * (n.payload.everyMs ?? 0)), nowMs)),
          {
            "content-type": "application/json",
          },
        );
      case "email": {
        const { subject, text } = summaryLines(n.payload);
        await sendMail(c, subject, text);
        return { ok: true, status: null, error: null, retry: false };
      }
    }
  } catch (e) {
    return { ok: false, status: null, error: String((e as Error).message ?? e), retry: true };
  }
}

async function post(url: string, body: string, headers: Record<string, string>): Promise<Outcome> {
  const r = await fetch(url, { method: "POST", body, headers, signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS), redirect: "manual" });
  await r.arrayBuffer().catch(() => {});
  if (r.ok) return { ok: true, status: r.status, error: null, retry: false };
  return { ok: false, status: r.status, error: `the receiver answered ${r.status}`, retry: r.status >= 500 || r.status === 429 };
}

/** logError reports a failure of the background delivery on stderr, where the server's errors go. */
const logError = (msg: string, e: unknown) => console.error(JSON.stringify({ level: "error", msg, error: String(e) }));

/** backoffMs is the wait after attempt `n` (1-based) failed. */
export const backoffMs = (n: number): number => 1000 * 2 ** (n - 1);

/** Deliverer works through the outbox in the background. */
export class Deliverer {
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly busy = new Set<string>();
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly store: AlertStore,
    private readonly channelOf: (n: StoredNotice) => Channel | undefined,
    private readonly clock: () => number,
    private readonly externalUrl: () => string,
    private readonly sendMail: SendMail,
    /** which notices are sent here (a cluster's copy: its partition's, while its node owns them); default all */
    private readonly placement: Placement = EVERYWHERE,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => {
      try {
        this.pass();
      } catch (e) {
        logError("the alert outbox could not be read", e);
      }
    }, POLL_MS);
  }

  /** pass starts every due notice not already under way. */
  pass(): void {
    if (!this.placement.active()) return;
    const now = this.clock();
    for (const n of this.store.outbox()) {
      if (n.dueMs > now || this.busy.has(n.id) || !this.placement.owns(n.ws) || !this.placement.sendable(n)) continue;
      this.busy.add(n.id);
      const p = this.attempt(n)
        .catch((e) => logError("an alert notice could not be settled; it is tried again", e))
        .finally(() => {
          this.busy.delete(n.id);
          this.running.delete(p);
        });
      this.running.add(p);
    }
  }

  private async attempt(n: StoredNotice): Promise<void> {
    const channel = this.channelOf(n);
    const attempts = n.attempts + 1;
    if (!channel) {
      await this.store.settle(n, { channel_id: n.channelId, status: "failed", attempts: n.attempts, error: "the channel was deleted" });
      return;
    }
    const o = await sendNotice(channel, n, this.externalUrl(), this.clock(), this.sendMail);
    if (o.ok) return this.store.settle(n, { channel_id: n.channelId, status: "delivered", attempts, error: null });
    const again = o.retry && attempts < MAX_ATTEMPTS;
    await this.store.settle(
      n,
      { channel_id: n.channelId, status: again ? "pending" : "failed", attempts, error: o.error },
      again ? this.clock() + backoffMs(attempts) : undefined,
    );
  }

  /** resend makes one attempt at a notice kept in no outbox: Alertmanager's re-post of the alerts still firing. */
  resend(channel: Channel, payload: NoticePayload): void {
    const p: Promise<void> = sendNotice(channel, { payload }, this.externalUrl(), this.clock(), this.sendMail)
      .then(
        () => {},
        (e) => logError("an alert re-post failed", e),
      )
      .finally(() => this.running.delete(p));
    this.running.add(p);
  }

  /** idle resolves once the attempts under way have settled. */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.allSettled([...this.running]);
  }

  /** stop ends the polling and waits for the attempts under way. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await Promise.allSettled([...this.running]);
  }
}
