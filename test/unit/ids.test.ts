// UUIDv7 ids (RFC 9562): canonical form, embedded time, strict increase, a clock that never goes back.
import { test, expect, describe } from "bun:test";
import { isUuid, IdGenerator, uuidTimeMs } from "../../src/ids.ts";

const generator = new IdGenerator();
const nextIds = (count: number, now = Date.now()) => generator.next(count, now);

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** timeField decodes the 48-bit unix_ts_ms of a UUIDv7 apart from the code under test. */
const timeField = (id: string): number => Number(BigInt(`0x${id.replace(/-/g, "").slice(0, 12)}`));

function expectStrictlyIncreasing(ids: string[]) {
  for (let i = 1; i < ids.length; i++) {
    if (!(ids[i - 1] < ids[i])) throw new Error(`ids[${i - 1}] ${ids[i - 1]} is not below ids[${i}] ${ids[i]}`);
  }
}

describe("nextIds: canonical lowercase UUIDv7", () => {
  test("each id is canonical lowercase with version 7 and variant 10xx", () => {
    const { ids } = nextIds(200);
    expect(ids.length).toBe(200);
    for (const id of ids) {
      expect(id).toMatch(UUID_V7);
      expect(id[14]).toBe("7");
      expect(parseInt(id[19], 16) >> 2).toBe(0b10);
      expect(id).toBe(id.toLowerCase());
      expect(id.length).toBe(36);
    }
  });

  test("a batch of one and of zero have the requested length", () => {
    expect(nextIds(1).ids.length).toBe(1);
    expect(nextIds(0).ids).toEqual([]);
  });

  test("ids of one millisecond share their random tail, and each millisecond and each generator draws its own", () => {
    const start = Date.now() + 60_000;
    const write = new IdGenerator().next(100, start).ids;
    expect(new Set(write.map((id) => id.slice(-8))).size).toBe(1);
    const g = new IdGenerator();
    const perMs = Array.from({ length: 100 }, (_, i) => g.next(1, start + i).ids[0].slice(-8));
    expect(new Set(perMs).size).toBeGreaterThan(95);
    const generators = Array.from({ length: 100 }, () => new IdGenerator().next(1, start).ids[0].slice(-8));
    expect(new Set(generators).size).toBeGreaterThan(95);
  });
});

describe("nextIds: the time field is the returned ms", () => {
  test("uuidTimeMs of every id equals the returned ms, decoded independently too", () => {
    const { ms, ids } = nextIds(50);
    for (const id of ids) {
      expect(uuidTimeMs(id)).toBe(ms);
      expect(timeField(id)).toBe(ms);
    }
  });

  test("the returned ms is the wall clock when it does not run behind", () => {
    const before = Date.now();
    const { ms } = nextIds(1);
    const after = Date.now();
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(after + 1);
  });

  test("the first 12 hex digits spell the ms", () => {
    const { ms, ids } = nextIds(1);
    expect(ids[0].replace(/-/g, "").slice(0, 12)).toBe(ms.toString(16).padStart(12, "0"));
  });
});

describe("nextIds: ids strictly increase (as strings)", () => {
  test("within one batch of 10,000", () => {
    const { ids } = nextIds(10_000);
    expectStrictlyIncreasing(ids);
    expect(new Set(ids).size).toBe(10_000);
  });

  test("across 2,000 consecutive calls, many in the same millisecond", () => {
    const all: string[] = [];
    let lastMs = -Infinity;
    for (let i = 0; i < 2_000; i++) {
      const { ms, ids } = nextIds(i % 3 === 0 ? 3 : 1);
      expect(ms).toBeGreaterThanOrEqual(lastMs);
      lastMs = ms;
      all.push(...ids);
    }
    expectStrictlyIncreasing(all);
  });

  test("across calls spanning a change of millisecond", async () => {
    const a = nextIds(5);
    await Bun.sleep(3);
    const b = nextIds(5);
    expect(b.ms).toBeGreaterThan(a.ms);
    expectStrictlyIncreasing([...a.ids, ...b.ids]);
  });
});

describe("nextIds: the clock never goes backwards", () => {
  test("a smaller now after a larger one keeps the larger ms", () => {
    const first = nextIds(2, Date.now() + 5);
    const second = nextIds(3, first.ms - 60_000);
    expect(second.ms).toBe(first.ms);
    for (const id of second.ids) expect(uuidTimeMs(id)).toBe(first.ms);
    expectStrictlyIncreasing([...first.ids, ...second.ids]);
  });

  test("a now far in the past still sorts after everything before", () => {
    const first = nextIds(1);
    const second = nextIds(1, 0);
    expect(second.ms).toBeGreaterThanOrEqual(first.ms);
    expect(second.ids[0] > first.ids[0]).toBe(true);
  });

  test("a larger now moves the ms forward to it", () => {
    const first = nextIds(1);
    const target = first.ms + 2;
    const second = nextIds(1, target);
    expect(second.ms).toBe(target);
    expect(timeField(second.ids[0])).toBe(target);
  });
});

describe("isUuid: canonical lowercase UUIDs only", () => {
  const accepted: [string, string][] = [
    ["a lowercase UUIDv7", "0190a8f2-7c3e-7abc-8def-0123456789ab"],
    ["a lowercase UUIDv4", "3f2504e0-4f89-41d3-9a0c-0305e82c3301"],
    ["the nil UUID", "00000000-0000-0000-0000-000000000000"],
  ];
  for (const [name, text] of accepted) test(`accepts ${name}`, () => expect(isUuid(text)).toBe(true));

  test("accepts every generated id", () => {
    for (const id of nextIds(20).ids) expect(isUuid(id)).toBe(true);
  });

  const rejected: [string, string][] = [
    ["uppercase", "0190A8F2-7C3E-7ABC-8DEF-0123456789AB"],
    ["one uppercase digit", "0190a8f2-7c3e-7abc-8def-0123456789aB"],
    ["no hyphens", "0190a8f27c3e7abc8def0123456789ab"],
    ["braces", "{0190a8f2-7c3e-7abc-8def-0123456789ab}"],
    ["urn prefix", "urn:uuid:0190a8f2-7c3e-7abc-8def-0123456789ab"],
    ["one digit short", "0190a8f2-7c3e-7abc-8def-0123456789a"],
    ["one digit long", "0190a8f2-7c3e-7abc-8def-0123456789abc"],
    ["a non-hex letter", "0190a8f2-7c3e-7abc-8def-0123456789ag"],
    ["hyphens in the wrong places", "0190a8f27-c3e-7abc-8def-0123456789ab"],
    ["leading space", " 0190a8f2-7c3e-7abc-8def-0123456789ab"],
    ["trailing newline", "0190a8f2-7c3e-7abc-8def-0123456789ab\n"],
    ["empty string", ""],
    ["free text", "not-a-uuid"],
  ];
  for (const [name, text] of rejected) test(`rejects ${name}`, () => expect(isUuid(text)).toBe(false));
});

describe("IdGenerator.above: a write's ids re-keyed above a given id", () => {
  test("of the same millisecond, each above it and ascending, from any generator's id", () => {
    for (let k = 0; k < 200; k++) {
      const [id] = new IdGenerator().next(1, 1_800_000_000_000 + k).ids;
      const write = new IdGenerator().next(50, 1_700_000_000_000 + k).ids;
      const { ms, ids } = IdGenerator.above(id, write);
      expect(ms).toBe(uuidTimeMs(id));
      expect(ids[0] > id).toBe(true);
      expectStrictlyIncreasing(ids);
      for (const next of ids) expect(next).toMatch(UUID_V7);
    }
  });

  test("the same ids wherever they are computed (every copy and the front agree), each keeping its random bits", () => {
    const [id] = new IdGenerator().next(1, 1_800_000_000_000).ids;
    const write = new IdGenerator().next(20, 1_700_000_000_000).ids;
    const a = IdGenerator.above(id, write);
    expect(IdGenerator.above(id, [...write])).toEqual(a);
    for (let i = 0; i < write.length; i++) expect(a.ids[i].slice(28)).toBe(write[i].slice(28));
  });

  test("of the next millisecond once the counter has no room", () => {
    const top = "017f22e279b0-7fff-bfff-ffff00000000".replace(/^(\w{8})(\w{4})/, "$1-$2");
    const { ms, ids } = IdGenerator.above(top, new IdGenerator().next(2, 1).ids);
    expect(ms).toBe(uuidTimeMs(top) + 1);
    expect(ids[0] > top).toBe(true);
  });
});
