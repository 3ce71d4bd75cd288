// A Server-Sent Events reader for tests: events and comment lines, parsed as EventSource does, as they arrive.

export interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

/** SseReader reads a text/event-stream body one event (or comment) at a time. */
export class SseReader {
  private readonly reader: { read(): Promise<{ done: boolean; value?: Uint8Array }>; cancel(): Promise<void> };
  private readonly decoder = new TextDecoder();
  private buffer = "";
  /** a read still under way when a wait timed out: the next wait takes it over, so no chunk is lost */
  private pending: Promise<{ done: boolean; value?: Uint8Array }> | undefined;
  /** comment lines seen, without the leading colon */
  readonly comments: string[] = [];
  ended = false;
  /** the last id: field seen, with or without an event (as EventSource's lastEventId) */
  lastEventId = "";

  constructor(body: ReadableStream<Uint8Array>) {
    this.reader = body.getReader() as unknown as SseReader["reader"];
  }

  /** next gives the next event, or undefined when the stream ends or `timeoutMs` passes first. */
  async next(timeoutMs = 5000): Promise<SseEvent | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const at = this.buffer.indexOf("\n\n");
      if (at >= 0) {
        const block = this.buffer.slice(0, at);
        this.buffer = this.buffer.slice(at + 2);
        const ev: SseEvent = { event: "message", data: "" };
        let any = false;
        const data: string[] = [];
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) {
            this.comments.push(line.slice(1).trim());
            continue;
          }
          const colon = line.indexOf(":");
          const name = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          any = true;
          if (name === "id") ev.id = this.lastEventId = value;
          else if (name === "event") ev.event = value;
          else if (name === "data") data.push(value);
        }
        if (!any || data.length === 0) continue; // EventSource dispatches no event without data
        ev.data = data.join("\n");
        return ev;
      }
      if (this.ended) return undefined;
      const left = deadline - Date.now();
      if (left <= 0) return undefined;
      this.pending ??= this.reader.read();
      const chunk = await Promise.race([this.pending, Bun.sleep(left).then(() => "timeout" as const)]);
      if (chunk === "timeout") return undefined;
      this.pending = undefined;
      if (chunk.done) this.ended = true;
      else this.buffer += this.decoder.decode(chunk.value, { stream: true });
    }
  }

  /** take reads `n` events, failing when they do not come within `timeoutMs` each. */
  async take(n: number, timeoutMs = 5000): Promise<SseEvent[]> {
    const out: SseEvent[] = [];
    for (let i = 0; i < n; i++) {
      const ev = await this.next(timeoutMs);
      if (!ev) throw new Error(`only ${out.length} of ${n} events arrived`);
      out.push(ev);
    }
    return out;
  }

  /** close cancels the stream (the client goes away). */
  async close(): Promise<void> {
    await this.reader.cancel().catch(() => {});
  }
}
