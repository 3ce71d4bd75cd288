// Contract §11, bad input for the decoders that need no server: the snappy block decoder against the reference
// implementation (the napi snappy package) and on garbage, the syslog parser and the TCP framer on anything.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { compressSync } from "snappy";
import { SnappyError, snappyUncompress } from "../../../../src/ingest/protocols/snappy.ts";
import { FRAME_MAX, SyslogFramer } from "../../../../src/ingest/protocols/syslog-frames.ts";
import { parseSyslog } from "../../../../src/ingest/protocols/syslog.ts";

describe("snappy", () => {
  test("decodes what the reference compressor wrote, byte for byte", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 3000 }),
          fc.string({ maxLength: 3000 }).map((s) => new TextEncoder().encode(s.repeat(3))),
        ),
        (bytes) => {
          expect(Buffer.from(snappyUncompress(compressSync(Buffer.from(bytes)), 1 << 20))).toEqual(Buffer.from(bytes));
        },
      ),
      { numRuns: 300 },
    );
  });
  test("garbage, truncation and flipped bytes fail with a SnappyError or decode within the limit, never hang or overrun", () => {
    const valid = compressSync(Buffer.from("hello hello hello hello world ".repeat(50)));
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 200 }),
          fc.integer({ min: 0, max: valid.length }).map((n) => valid.subarray(0, n)),
          fc.tuple(fc.integer({ min: 0, max: valid.length - 1 }), fc.integer({ min: 0, max: 255 })).map(([at, b]) => {
            const copy = Buffer.from(valid);
            copy[at] = b;
            return copy;
          }),
        ),
        (bytes) => {
          try {
            expect(snappyUncompress(bytes, 4096).byteLength).toBeLessThanOrEqual(4096);
          } catch (e) {
            expect(e).toBeInstanceOf(SnappyError);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
  test("a declared length over the limit fails before anything is allocated", () => {
    expect(() => snappyUncompress(Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0x0f]), 1 << 20)).toThrow("over the limit");
    expect(() => snappyUncompress(Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), 1 << 20)).toThrow(SnappyError);
  });
});

describe("syslog", () => {
  test("RFC 5424 with structured data escapes, a BOM, and nil fields", () => {
    const item = parseSyslog('<165>1 2026-11-22T10:00:00.123456+01:00 web-1 api 42 ID47 [x@1 a="q\\"uote" b="br\\]acket"][y@2] \uFEFFhello', 0);
    expect(item.entry).toEqual({
      action: "ID47",
      level: "info",
      message: "hello",
      clientTimestamp: "2026-11-22T10:00:00.123456+01:00",
      context: { host: "web-1", app: "api", procid: "42", facility: "local4" },
      metadata: { "x@1": { a: 'q"uote', b: "br]acket" }, "y@2": {} },
    });
    expect(parseSyslog('<14>1 - - - - - [origin ip="10.0.0.1" software.name="rsyslogd"] m', 0).entry?.metadata).toEqual({
      origin: { ip: "10.0.0.1", software: { name: "rsyslogd" } },
    });
    expect(parseSyslog("<14>1 - - - - - -", 5_000).entry).toMatchObject({
      action: "syslog",
      message: null,
      clientTimestamp: "1970-01-01T00:00:05.000Z",
      context: { facility: "user" },
    });
  });
  test("RFC 3164 in SLUICE_SYSLOG_TZ: the current year there, the TAG and its pid", () => {
    const now = Date.parse("2026-07-01T00:00:00Z");
    const item = parseSyslog("<11>Jun  3 14:05:06 host1 nginx[77]: upstream timed out", now, "Europe/Paris");
    expect(item.entry).toMatchObject({
      action: "nginx",
      level: "error",
      message: "upstream timed out",
      clientTimestamp: "2026-06-03T12:05:06.000Z",
      context: { host: "host1", app: "nginx", procid: "77", facility: "user" },
    });
    // a December line read in early January is last year's
    expect(parseSyslog("<13>Dec 31 23:59:59 h t: m", Date.parse("2027-01-01T00:10:00Z")).entry?.clientTimestamp).toBe("2026-12-31T23:59:59.000Z");
  });
  test("garbage is an item with a reason and its sample, never a throw", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 300 }), fc.constantFrom("UTC", "America/New_York"), (line, tz) => {
        const item = parseSyslog(line, Date.now(), tz);
        if (!item.entry) {
          expect(item.problem?.message.length).toBeGreaterThan(0);
          expect(item.sample().length).toBeLessThanOrEqual(1000);
        }
      }),
      { numRuns: 2000 },
    );
    for (const line of ["", "hello", "<999>1 - - - - - -", "<13>Foo 1 00:00:00 h t: m", '<13>1 - - - - - [x a="unterminated'])
      expect(parseSyslog(line, 0).problem).toBeDefined();
  });
  test("the TCP framer splits octet-counted and newline-framed messages across any chunking", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 50 }).filter((s) => !s.includes("\n") && s.trim() !== ""),
          { minLength: 1, maxLength: 10 },
        ),
        fc.array(fc.boolean(), { minLength: 10, maxLength: 10 }),
        fc.integer({ min: 1, max: 20 }),
        (messages, counted, chunk) => {
          const wire = Buffer.from(messages.map((m, i) => (counted[i] ? `${Buffer.byteLength(m)} ${m}` : `<${m}\n`)).join(""));
          const framer = new SyslogFramer();
          const got: string[] = [];
          for (let i = 0; i < wire.length; i += chunk) got.push(...framer.push(wire.subarray(i, i + chunk)).messages);
          got.push(...framer.end());
          expect(got).toEqual(messages.map((m, i) => (counted[i] ? m : `<${m}`)));
        },
      ),
      { numRuns: 300 },
    );
  });
  test("the framer refuses an octet count over FRAME_MAX and cuts an endless line there", () => {
    const framer = new SyslogFramer();
    expect(framer.push(Buffer.from(`${FRAME_MAX + 1} x`)).oversized).toBe(1);
    const long = framer.push(Buffer.alloc(FRAME_MAX + 10, 0x61));
    expect(long.messages.map((m) => m.length)).toEqual([FRAME_MAX]);
  });
});
