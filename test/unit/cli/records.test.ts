// readRecords streams NDJSON or one JSON array; progressBar draws the import's progress line.
import { describe, expect, test } from "bun:test";
import { readRecords, type ReadRecord } from "../../../src/cli/records.ts";
import { progressBar } from "../../../src/cli/transfer.ts";

/** read feeds text in chunks of `size` characters, so values straddle chunk boundaries. */
async function read(text: string, size: number): Promise<ReadRecord[]> {
  const bytes = new TextEncoder().encode(text);
  const chunks = (async function* () {
    for (let i = 0; i < bytes.length; i += size) yield bytes.slice(i, i + size);
  })();
  const out: ReadRecord[] = [];
  for await (const r of readRecords(chunks)) out.push(r);
  return out;
}

describe("readRecords", () => {
  const array = JSON.stringify([{ a: 'x,]}"[' }, [1, [2, { b: "\\" }]], "é😀", null, 5]);
  for (const size of [1, 3, 7, 1000]) {
    test(`a JSON array yields each element with its index, whatever the chunk size (${size})`, async () => {
      expect(await read(`  ${array}\n`, size)).toEqual(JSON.parse(array).map((value: unknown, at: number) => ({ at, value })));
    });
    test(`NDJSON yields each non-blank line with its line number, the last one without a newline too (${size})`, async () => {
      expect(await read('{"a":1}\n\n[2]\n"three"', size)).toEqual([
        { at: 1, value: { a: 1 } },
        { at: 3, value: [2] },
        { at: 4, value: "three" },
      ]);
    });
  }
  test("a line that is not JSON is reported at its line, and reading goes on", async () => {
    const out = await read('{"a":1}\n{oops\n{"b":2}\n', 4);
    expect(out[1]).toEqual({ at: 2, error: expect.stringContaining("not JSON") });
    expect(out[2]).toEqual({ at: 3, value: { b: 2 } });
  });
  test("an array that is never closed is reported", async () => {
    const out = await read('[{"a":1},{"b":2}', 5);
    expect(out.at(-1)).toEqual({ at: 1, error: "the JSON array is not closed with ]" });
  });
});

describe("progressBar", () => {
  test("shows the share of the file read and the counts", () => {
    expect(progressBar(50, 200, { read: 10, stored: 8, rejected: 2, reasons: [] })).toBe(
      `\r[${"#".repeat(8)}${" ".repeat(22)}]  25%  read 10  stored 8  rejected 2`,
    );
    expect(progressBar(0, 0, { read: 0, stored: 0, rejected: 0, reasons: [] })).toContain("100%");
  });
});
