// syslog-frames: a TCP syslog stream → messages, framed by octet counting ("LEN SP MSG", RFC 6587) or by newlines,
// decided per message, as senders of either kind expect.

/** FRAME_MAX bounds one message; a longer one is cut there (newline framing) or refused (octet counting). */
export const FRAME_MAX = 64 * 1024;

/** SyslogFramer gathers a connection's bytes and hands out whole messages. */
export class SyslogFramer {
  private buffer: Buffer = Buffer.alloc(0);

  /** push adds bytes and returns the messages they complete; `oversized` counts the refused ones. */
  push(chunk: Uint8Array): { messages: string[]; oversized: number } {
    this.buffer = this.buffer.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.buffer, chunk]);
    const messages: string[] = [];
    let oversized = 0;
    for (;;) {
      const b = this.buffer;
      if (b.length === 0) break;
      const counted = /^([1-9]\d{0,8}) /.exec(b.subarray(0, 11).toString("latin1"));
      if (counted) {
        const len = Number(counted[1]);
        const start = counted[0].length;
        if (len > FRAME_MAX) {
          oversized++;
          this.buffer = Buffer.alloc(0); // the rest of the stream cannot be framed any more
          break;
        }
        if (b.length < start + len) break;
        messages.push(b.subarray(start, start + len).toString("utf8"));
        this.buffer = b.subarray(start + len);
        continue;
      }
      const nl = b.indexOf(0x0a);
      if (nl < 0) {
        if (b.length > FRAME_MAX) {
          messages.push(b.subarray(0, FRAME_MAX).toString("utf8"));
          this.buffer = Buffer.alloc(0);
        }
        break;
      }
      const line = b.subarray(0, nl).toString("utf8").replace(/\r$/, "");
      if (line.trim() !== "") messages.push(line);
      this.buffer = b.subarray(nl + 1);
    }
    return { messages, oversized };
  }

  /** end returns what is left when the connection closes: a last message without its newline. */
  end(): string[] {
    const rest = this.buffer.toString("utf8").trim();
    this.buffer = Buffer.alloc(0);
    return rest === "" ? [] : [rest];
  }
}
