// syslog: one RFC 5424 or RFC 3164 message → an entry, by the mapping of contract §11.
import { type Item, SAMPLE_CHARS, timestampOf } from "./item.ts";
import { levelOfSyslog } from "./levels.ts";
import { nestDotted } from "./nest.ts";

const FACILITIES = [
  "kern",
  "user",
  "mail",
  "daemon",
  "auth",
  "syslog",
  "lpr",
  "news",
  "uucp",
  "cron",
  "authpriv",
  "ftp",
  "ntp",
  "security",
  "console",
  "solaris-cron",
  "local0",
  "local1",
  "local2",
  "local3",
  "local4",
  "local5",
  "local6",
  "local7",
];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

const RFC5424 = /^<(\d{1,3})>([1-9]\d?) (\S+) (\S+) (\S+) (\S+) (\S+) ?/;
const RFC3164 = /^<(\d{1,3})>([A-Z][a-z]{2}) {1,2}(\d{1,2}) (\d{2}):(\d{2}):(\d{2})(?: (\S+))?(?: (.*))?$/s;
const TAG = /^([^\s:[\]]{1,64})(?:\[([^\]]{0,128})\])?: ?/;
const BOM = "\uFEFF";

/** parseSyslog maps one syslog message; one that is neither RFC 5424 nor RFC 3164 is an item with a problem. */
export function parseSyslog(message: string, receivedMs: number, timeZone = "UTC"): Item {
  const line = message.replace(/[\r\n\0]+$/, "");
  const sample = () => line.slice(0, SAMPLE_CHARS);
  const refused = (why: string): Item => ({ problem: { field: "", message: why }, sample });
  const head = RFC5424.exec(line);
  if (head) {
    const pri = Number(head[1]);
    if (pri > 191) return refused(`the priority <${pri}> is over 191`);
    const [, , , timestamp, host, app, procid, msgid] = head;
    const sd = structuredData(line, head[0].length);
    if (typeof sd === "string") return refused(sd);
    let msg = line.slice(sd.end).replace(/^ /, "");
    if (msg.startsWith(BOM)) msg = msg.slice(1);
    return {
      entry: {
        action: nil(msgid) ?? nil(app) ?? "syslog",
        level: levelOfSyslog(pri & 7),
        message: msg === "" && sd.end >= line.length ? null : msg,
        clientTimestamp: timestamp === "-" ? timestampOf(receivedMs) : timestamp,
        context: context(pri, nil(host), nil(app), nil(procid)),
        metadata: Object.keys(sd.data).length > 0 ? nestDotted(sd.data) : null,
      },
      sample,
    };
  }
  const old = RFC3164.exec(line);
  if (old) {
    const pri = Number(old[1]);
    if (pri > 191) return refused(`the priority <${pri}> is over 191`);
    const month = MONTHS.indexOf(old[2]);
    if (month < 0) return refused(`${JSON.stringify(old[2])} is not a month`);
    const ms = wallClockMs(month, Number(old[3]), Number(old[4]), Number(old[5]), Number(old[6]), receivedMs, timeZone);
    const host = old[7];
    let rest = old[8] ?? "";
    let app: string | undefined;
    let procid: string | undefined;
    const tag = TAG.exec(rest);
    if (tag) {
      app = tag[1];
      procid = tag[2];
      rest = rest.slice(tag[0].length);
    }
    return {
      entry: {
        action: app ?? "syslog",
        level: levelOfSyslog(pri & 7),
        message: rest,
        clientTimestamp: timestampOf(ms),
        context: context(pri, host, app, procid),
        metadata: null,
      },
      sample,
    };
  }
  return refused("not an RFC 5424 or RFC 3164 syslog message (<PRI>VERSION TIMESTAMP HOST APP PROCID MSGID SD MSG, or <PRI>Mmm dd hh:mm:ss HOST TAG: MSG)");
}

const nil = (v: string | undefined): string | undefined => (v === undefined || v === "-" || v === "" ? undefined : v);

function context(pri: number, host: string | undefined, app: string | undefined, procid: string | undefined): Record<string, unknown> {
  const c: Record<string, unknown> = {};
  if (host) c.host = host;
  if (app) c.app = app;
  if (procid) c.procid = procid;
  c.facility = FACILITIES[pri >> 3];
  return c;
}

/** structuredData reads RFC 5424 STRUCTURED-DATA from `at`: {sd-id: {param: value}} and where it ends, or why it is malformed. */
function structuredData(line: string, at: number): { data: Record<string, Record<string, string>>; end: number } | string {
  const data: Record<string, Record<string, string>> = Object.create(null);
  if (line[at] === "-" || at >= line.length) return { data: { ...data }, end: Math.min(line.length, at + 1) };
  let i = at;
  while (line[i] === "[") {
    i++;
    const id = /^[^\s\]=" ]{1,32}/.exec(line.slice(i, i + 33));
    if (!id) return "a structured data element has no SD-ID";
    const params: Record<string, string> = Object.create(null);
    i += id[0].length;
    while (line[i] === " ") {
      i++;
      const name = /^[^\s\]=" ]{1,32}/.exec(line.slice(i, i + 33));
      if (!name || line[i + name[0].length] !== "=" || line[i + name[0].length + 1] !== '"') return `the structured data of ${id[0]} has a malformed parameter`;
      i += name[0].length + 2;
      let value = "";
      for (;;) {
        if (i >= line.length) return `the structured data of ${id[0]} is not closed`;
        const c = line[i++];
        if (c === '"') break;
        if (c === "\\" && i < line.length && '"\\]'.includes(line[i])) value += line[i++];
        else value += c;
      }
      params[name[0]] = value;
    }
    if (line[i] !== "]") return `the structured data of ${id[0]} is not closed with ]`;
    i++;
    data[id[0]] = { ...params };
  }
  return { data: { ...data }, end: i };
}

/**
 * wallClockMs reads an RFC 3164 time, which has no year nor zone: the current year in `timeZone` (the previous one
 * when that would put it more than a day ahead of now, as a December message read in January).
 */
function wallClockMs(month: number, day: number, h: number, m: number, s: number, nowMs: number, timeZone: string): number {
  const year = Number(new Intl.DateTimeFormat("en-US", { timeZone, year: "numeric" }).format(nowMs));
  let ms = zonedToUtc(year, month, day, h, m, s, timeZone);
  if (ms > nowMs + 86_400_000) ms = zonedToUtc(year - 1, month, day, h, m, s, timeZone);
  return ms;
}

function zonedToUtc(year: number, month: number, day: number, h: number, m: number, s: number, timeZone: string): number {
  const guess = Date.UTC(year, month, day, h, m, s);
  const first = guess - offsetMs(guess, timeZone);
  return guess - offsetMs(first, timeZone); // again at the instant found: right across a DST change
}

const formats = new Map<string, Intl.DateTimeFormat>();

/** offsetMs is how far `timeZone`'s wall clock is ahead of UTC at the instant ms. */
function offsetMs(ms: number, timeZone: string): number {
  let f = formats.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formats.set(timeZone, f);
  }
  const p = Object.fromEntries(f.formatToParts(ms).map((x) => [x.type, x.value]));
  const wall = Date.UTC(Number(p.year), Number(p.month) - 1, Number(p.day), Number(p.hour), Number(p.minute), Number(p.second));
  return wall - Math.floor(ms / 1000) * 1000;
}
