// Block encoding: a block reads back exactly, and blocks written by earlier versions (v3, v4, v5) still read.
import { expect, test } from "bun:test";
import { Packr } from "msgpackr";
import { IdGenerator } from "../../../src/ids.ts";

const generator = new IdGenerator();
const nextIds = (count: number, now = Date.now()) => generator.next(count, now);
import fc from "fast-check";
import { logEntryText, toLogEntry } from "../../../src/http/wire.ts";
import { Block, type Entry } from "../../../src/storage/format/block.ts";
import { assembleBlock, encodeBlock, encodeSized, encodeWithObjects, type Columns } from "../../../src/storage/format/block-encode.ts";
import { FramedObjects, framedTextReader } from "../../../src/storage/format/block-readers.ts";
import { encodeFloat64, packr as columnPackr } from "../../../src/storage/format/columns.ts";
import { encodeDict, encodeDictList } from "../../../src/storage/format/dict-column.ts";
import { encodeText, isCompactText, textReader } from "../../../src/storage/format/text-column.ts";
import { FRAME, framesOf, isFramed, packFramed, packWhole, unpackFrame, unpackWhole } from "../../../src/storage/format/packed.ts";
import { encodeShaped, isShaped } from "../../../src/storage/format/shaped.ts";
import { isNumberedText } from "../../../src/storage/format/numbered-text.ts";

const entries = (n: number): Entry[] =>
  nextIds(n).ids.map((id, i) => ({
    id,
    level: i % 2 ? "info" : "error",
    action: `a.${i % 9}`,
    message: i % 3 ? (i % 11 ? `m ${i}` : `ünïcödé ☕ ${i}`) : i % 6 ? null : "",
    tags: i % 8 ? [`t${i % 4}`, ...(i % 5 ? [] : ["ü", `x${i}`])] : [],
    clientMs: 1_700_000_000_000 + i,
    actor: i % 5 ? null : { id: i },
    target: null,
    context: null,
    metadata: i % 7 ? null : { deep: { x: [i], at: `room ${i}` } },
  }));
const read = (b: Block) => Array.from({ length: b.size }, (_, i) => fields(b.entry(i)));
const fields = (e: Entry) => ({
  id: e.id,
  level: e.level,
  action: e.action,
  message: e.message,
  tags: e.tags,
  clientMs: e.clientMs,
  actor: e.actor,
  target: e.target,
  context: e.context,
  metadata: e.metadata,
});

test("a block reads back every field of every entry, and finds each by id", () => {
  const sent = entries(1000);
  const block = Block.decode(0, encodeBlock(sent));
  expect(read(block)).toEqual(sent.map(fields));
  for (let i = 0; i < sent.length; i += 97) expect(block.indexOf(sent[i].id)).toBe(i);
});

const packr = new Packr({ useRecords: true, moreTypes: false, bundleStrings: false });
const column = (sent: Entry[], f: (e: Entry) => unknown) => packr.pack(sent.map(f));
const objectsColumn = (sent: Entry[]) =>
  column(sent, (e) => (e.actor === null && e.metadata === null ? null : JSON.stringify([e.actor, e.target, e.context, e.metadata])));

test("a v4 block (every column but the ids a msgpack array), as earlier versions wrote it, still reads", () => {
  const sent = entries(50);
  const v4 = packr.pack({
    v: 4,
    n: sent.length,
    c: [
      packr.pack(sent.map((e) => e.id).join("")),
      column(sent, (e) => e.level),
      column(sent, (e) => e.action),
      column(sent, (e) => e.message),
      column(sent, (e) => e.tags),
      column(sent, (e) => e.clientMs),
      objectsColumn(sent),
    ],
  });
  const block = Block.decode(0, v4);
  expect(read(block)).toEqual(sent.map(fields));
  expect(block.indexOf(sent[17].id)).toBe(17);
});

test("a v3 block (ids as an array), as earlier versions wrote it, still reads", () => {
  const sent = entries(50);
  const col = (f: (e: Entry) => unknown) => column(sent, f);
  const v3 = packr.pack({
    v: 3,
    n: sent.length,
    c: [col((e) => e.id), col((e) => e.level), col((e) => e.action), col((e) => e.message), col((e) => e.tags), col((e) => e.clientMs), objectsColumn(sent)],
  });
  const block = Block.decode(0, v3);
  expect(read(block)).toEqual(sent.map(fields));
  expect(block.indexOf(sent[17].id)).toBe(17);
});

test("a block without objects reads every object field as null", () => {
  const sent = entries(20).map((e) => ({ ...e, actor: null, target: null, context: null, metadata: null }));
  expect(read(Block.decode(0, encodeBlock(sent)))).toEqual(sent.map(fields));
});

test("entries read in any order, a field at a time, read back the same", () => {
  const sent = entries(300);
  const block = Block.decode(0, encodeBlock(sent));
  for (let i = sent.length - 1; i >= 0; i -= 7) expect(block.message(i)).toBe(sent[i].message);
  for (let i = 3; i < sent.length; i += 13) expect(fields(block.entry(i))).toEqual(fields(sent[i]));
});

test("a block's case-insensitive message search stays right after other blocks are folded in between", () => {
  const block = (messages: string[]) => Block.decode(0, encodeBlock(entries(messages.length).map((e, i) => ({ ...e, message: messages[i] }))));
  const a = block(["Disk FULL", "ok", "disk full again"]);
  const b = block(["other", "DISK", "no"]);
  const c = block(["x".repeat(200_000), "Full"]); // a longer column than any before: the fold buffer grows
  const full = Buffer.from("full");
  expect(a.messagesFolding(full)).toEqual([0, 2]);
  expect(b.messagesFolding(Buffer.from("disk"))).toEqual([1]);
  expect(a.messagesFolding(full)).toEqual([0, 2]); // folded again: b's fold came after
  expect(a.messagesFolding(Buffer.from("ok"))).toEqual([1]);
  expect(b.messagesFolding(full)).toEqual([]);
  expect(c.messagesFolding(full)).toEqual([1]);
  expect(b.messagesFolding(Buffer.from("no"))).toEqual([2]);
});

test("a needle that runs from one message into the next names neither: message searches are exact, with or without case", () => {
  const messages = ["login o", "K then out", "gin", null, "", "lo", "gin ok", "OK"];
  const block = Block.decode(0, encodeBlock(entries(messages.length).map((e, i) => ({ ...e, message: messages[i] }))));
  for (const needle of ["login", "ok", "o", "then outgin", "log"]) {
    const holding = messages.flatMap((m, i) => (m?.includes(needle) ? [i] : []));
    const folded = messages.flatMap((m, i) => (m?.toLowerCase().includes(needle) ? [i] : []));
    expect([needle, block.messagesWith(Buffer.from(needle)), block.messagesFolding(Buffer.from(needle))]).toEqual([needle, holding, folded]);
  }
});

test("a block's ids read one at a time, a few or most of them, in any order, are the ids it was written with", () => {
  const sent = entries(200);
  for (const order of [[150, 3, 199, 0], Array.from({ length: 200 }, (_, i) => 199 - i)]) {
    const block = Block.decode(0, encodeBlock(sent)); // a fresh block: nothing read yet
    expect(order.map((i) => block.id(i))).toEqual(order.map((i) => sent[i].id));
  }
});

/** v5Block encodes entries as format 5 wrote them: the same columns, none packed (as a cluster front before 6 sends them). */
function v5Block(sent: Entry[]): Uint8Array {
  const objects = sent.map((e) =>
    e.actor === null && e.target === null && e.context === null && e.metadata === null ? null : JSON.stringify([e.actor, e.target, e.context, e.metadata]),
  );
  const columns: Columns = [
    encodeDict(sent.map((e) => e.level)),
    encodeDict(sent.map((e) => e.action)),
    encodeText(sent.map((e) => e.message)),
    encodeDictList(sent.map((e) => e.tags)),
    encodeFloat64(sent.map((e) => e.clientMs)),
    objects.some((o) => o !== null) ? encodeText(objects) : null,
  ];
  return assembleBlock(
    sent.map((e) => e.id),
    columns,
  );
}

test("a v5 block (columns not packed), as earlier versions and cluster fronts wrote it, still reads", () => {
  const sent = entries(700);
  const block = Block.decode(0, v5Block(sent));
  expect(read(block)).toEqual(sent.map(fields));
  expect(block.indexOf(sent[417].id)).toBe(417);
  expect(Block.sizeOf(v5Block(sent))).toBe(700);
});

test("a text column in frames of 128 entries (tag 2), as format 6 first wrote them, reads entry by entry and whole", () => {
  const values = entries(128 * 4 + 9).map((e) => e.message);
  const frames: Uint8Array[] = [];
  for (let start = 0; start < values.length; start += 128) frames.push(Bun.zstdCompressSync(encodeText(values.slice(start, start + 128)), { level: 3 }));
  const packed = new Uint8Array([2, ...columnPackr.pack(frames)]);
  expect(isFramed(packed)).toBe(true);
  const alone = framedTextReader(packed, values.length);
  for (const i of [0, 127, 128, 300, values.length - 1]) expect(alone(i)).toBe(values[i]);
  const whole = textReader(unpackWhole(packed, values.length), values.length);
  expect(values.map((_, i) => whole(i))).toEqual(values);
});

test("a block's text columns are stored in frames: entries read alone or all together, and searched across frames, as sent", () => {
  const sent = entries(FRAME * 3 + 17); // a short last frame
  const value = encodeBlock(sent);
  expect(Block.sizeOf(value)).toBe(sent.length);
  const alone = Block.decode(0, value);
  for (const i of [FRAME * 3 + 16, 0, FRAME, FRAME - 1, FRAME * 2 + 5]) expect(fields(alone.entry(i))).toEqual(fields(sent[i]));
  expect(read(Block.decode(0, value))).toEqual(sent.map(fields));
  const searched = Block.decode(0, value);
  const holding = (needle: string) => sent.flatMap((e, i) => (e.message?.includes(needle) ? [i] : []));
  for (const needle of ["ünïcödé", "m 1", "☕ 2"]) expect(searched.messagesWith(Buffer.from(needle))).toEqual(holding(needle));
  const folded = sent.flatMap((e, i) => (e.message?.toLowerCase().includes("m 4") || [...(e.message ?? "")].some((c) => c.charCodeAt(0) > 0x7f) ? [i] : []));
  expect(searched.messagesFolding(Buffer.from("m 4"))).toEqual(folded);
  expect(searched.objectsWith(Buffer.from("room 1"))).toEqual(sent.flatMap((e, i) => (e.metadata && `room ${i}`.includes("room 1") ? [i] : [])));
});

test("a block's messages are stored as shapes and numbers where that is smaller, and read and searched as sent, needles with digits or without", () => {
  const sent = entries(FRAME * 2 + 9).map((e, i) => ({
    ...e,
    message: i % 50 === 7 ? null : `Request ${900_000 + i} took ${(i * 7919) % 997} ms ${i % 3 ? "ok" : "ünï"}`,
  }));
  const value = encodeBlock(sent);
  const [, , , message] = (columnPackr.unpack(value) as { c: Uint8Array[] }).c;
  expect(framesOf(message).map((frame) => isNumberedText(unpackFrame(frame)))).toEqual([true, true, true]);
  expect(read(Block.decode(0, value))).toEqual(sent.map(fields));
  const searched = Block.decode(0, value);
  const holding = (needle: string, fold = false) =>
    sent.flatMap((e, i) =>
      (fold ? e.message?.toLowerCase() : e.message)?.includes(needle) || (fold && [...(e.message ?? "")].some((c) => c.charCodeAt(0) > 0x7f)) ? [i] : [],
    );
  for (const needle of ["took ", "ünï", " ms ok", "1", "Request 900012 ", "9000", " 0 ms"])
    expect(searched.messagesWith(Buffer.from(needle))).toEqual(holding(needle));
  for (const needle of ["request ", "ms ok", "request 90001"]) expect(searched.messagesFolding(Buffer.from(needle))).toEqual(holding(needle, true));
  // the same numbers over and over compress smaller as text: those frames keep it
  const repeated = encodeBlock(sent.map((e) => ({ ...e, message: "10.0.0.1:8080 10.0.0.2:8080 10.0.0.3:8080" })));
  const [, , , kept] = (columnPackr.unpack(repeated) as { c: Uint8Array[] }).c;
  expect(framesOf(kept).map((frame) => [isNumberedText(unpackFrame(frame)), isCompactText(unpackFrame(frame))])).toEqual([
    [false, true],
    [false, true],
    [false, true],
  ]);
  expect(read(Block.decode(0, repeated)).map((e) => e.message)).toEqual(sent.map(() => "10.0.0.1:8080 10.0.0.2:8080 10.0.0.3:8080"));
});

test("after a block's first frame of messages, each frame is made only in the form the frame before kept, and reads as sent", () => {
  const counting = (e: Entry, i: number) => ({ ...e, message: `Request ${900_000 + i} took ${(i * 7919) % 997} ms` });
  const addresses = (e: Entry) => ({ ...e, message: "10.0.0.1:8080 10.0.0.2:8080 10.0.0.3:8080" });
  const forms = (sent: Entry[]) => {
    const [, , , message] = (columnPackr.unpack(encodeBlock(sent)) as { c: Uint8Array[] }).c;
    expect(read(Block.decode(0, encodeBlock(sent)))).toEqual(sent.map(fields));
    return framesOf(message).map((frame) => isNumberedText(unpackFrame(frame)));
  };
  const n = FRAME * 3;
  // numbers that would each be kept numbered in a frame of their own follow a first frame kept as text: they stay text
  expect(forms(entries(n).map((e, i) => (i < FRAME ? addresses(e) : counting(e, i))))).toEqual([false, false, false]);
  // and the other way: a frame that would compress smaller as text follows numbered frames
  expect(forms(entries(n).map((e, i) => (i < 2 * FRAME ? counting(e, i) : addresses(e))))).toEqual([true, true, true]);
  // a frame without a number at all is text, and so are the frames after it
  expect(forms(entries(n).map((e, i) => (i < FRAME ? counting(e, i) : i < 2 * FRAME ? { ...e, message: "no digits" } : counting(e, i))))).toEqual([
    true,
    false,
    false,
  ]);
});

test("a block's action column is stored as it is for counting, unless its dictionary is large: then compressed, and read and counted as sent", () => {
  for (const [distinct, compressed] of [
    [9, false],
    [600, true],
  ] as const) {
    const sent = entries(1000).map((e, i) => ({ ...e, action: `service-${i % distinct}.component.handler` }));
    const value = encodeBlock(sent);
    const [, , action] = (columnPackr.unpack(value) as { c: Uint8Array[] }).c; // ids, level, action, ...
    expect(action[0]).toBe(compressed ? 1 : 0); // packed.ts: 1 zstd, 0 plain
    const block = Block.decode(0, value);
    const { values, codes } = block.codes("action")!;
    expect(Array.from(codes, (c) => values[c])).toEqual(sent.map((e) => e.action));
    expect(read(block)).toEqual(sent.map(fields));
  }
});

// entries over three frames with their objects column as `pack` stores their texts, read and searched back
function objectsStoredAs(pack: (objects: (string | null)[]) => Uint8Array, shaped: boolean) {
  const sent = entries(FRAME * 2 + 5);
  const [level, action, message, tags, clientMs] = encodeSized(sent).columns;
  const objects = sent.map((e) => (e.actor === null && e.metadata === null ? null : JSON.stringify([e.actor, e.target, e.context, e.metadata])));
  const value = assembleBlock(
    sent.map((e) => e.id),
    [level, action, message, tags, clientMs, pack(objects)],
  );
  expect(read(Block.decode(0, value))).toEqual(sent.map(fields));
  expect(Block.decode(0, value).objectsWith(Buffer.from("room 1"))).toEqual(sent.flatMap((e, i) => (e.metadata && `room ${i}`.includes("room 1") ? [i] : [])));
  // an entry with objects gives them as scalars when they are stored as shapes, else none (read as text)
  const block = Block.decode(0, value);
  const withObjects = objects.findIndex((o) => o !== null);
  expect(block.objectScalars(withObjects) === undefined).toBe(!shaped);
  expect(block.objectScalars(objects.indexOf(null))).toBe(shaped ? null : undefined);
}

test("a block whose objects are JSON text in frames, as format 6 wrote them before shapes, reads and searches as sent", () => {
  objectsStoredAs((objects) => packFramed(objects.length, (start, end) => encodeText(objects.slice(start, end))), false);
});

test("a block whose objects are shapes and leaves in one column, as format 6 wrote them before frames of shapes, reads and searches as sent", () => {
  objectsStoredAs((objects) => packWhole(encodeShaped(objects)!), true);
});

test("a block's objects are stored in frames of FRAME entries, each shapes and leaves, and entries of a mix of frames read as sent", () => {
  const sent = entries(FRAME * 2 + 5);
  const objects = encodeSized(sent).columns[5]!;
  expect(isFramed(objects)).toBe(true);
  expect(framesOf(objects).map((frame) => isShaped(unpackFrame(frame)))).toEqual([true, true, true]);
  // a text that does not split (it holds U+0000, which JSON.stringify never writes) keeps its frame alone as text
  const odd = sent.map((e, i) => (i === FRAME + 3 ? { ...e, metadata: { note: "nul \u0000 here" } } : e));
  const texts = odd.map((e) =>
    e.actor === null && e.target === null && e.context === null && e.metadata === null
      ? null
      : JSON.stringify([e.actor, e.target, e.context, e.metadata]).replace("\\u0000", "\u0000"),
  );
  const { columns } = encodeWithObjects(odd, texts);
  expect(framesOf(columns[5]!).map((frame) => isShaped(unpackFrame(frame)))).toEqual([true, false, true]);
  const block = Block.decode(
    0,
    assembleBlock(
      odd.map((e) => e.id),
      columns,
    ),
  );
  for (let i = 0; i < odd.length; i += 7) expect(block.objectsText(i)).toBe(texts[i]);
  // scalars come off shaped frames only: the text frame's entries are read as text
  expect([0, FRAME + 3, 2 * FRAME + 1].map((i) => block.objectScalars(i) === undefined)).toEqual([false, true, false]);
  expect(block.objectsWith(Buffer.from("room 1"))).toEqual(odd.flatMap((e, i) => (e.metadata && `room ${i}`.includes("room 1") ? [i] : [])));
});

test("a path search of part of a block opens only the frames that part lies in, and finds there what a search of the whole block finds", () => {
  const sent = entries(FRAME * 3 + 5);
  const block = Block.decode(0, encodeBlock(sent));
  const framed = new FramedObjects(encodeSized(sent).columns[5]!, sent.length);
  const room = Buffer.from("room");
  const everywhere = framed.entriesWith(room);
  fc.assert(
    fc.property(fc.nat(sent.length - 1), fc.nat(FRAME * 2), (from, length) => {
      const span = Math.min(length + 1, sent.length - from);
      const inSpan = everywhere.filter((i) => i >= from && i < from + span);
      // the slice's own search finds the same entries, at the slice's positions
      expect(block.slice(0, from, span).objectsWith(room)).toEqual(inSpan.map((i) => i - from));
      // and the frame search it makes lists nothing from a frame outside the span
      const searched = framed.entriesWith(room, from, from + span);
      expect(searched.filter((i) => i >= from && i < from + span)).toEqual(inSpan);
      expect(searched.every((i) => Math.floor(i / FRAME) >= Math.floor(from / FRAME) && Math.floor(i / FRAME) <= Math.floor((from + span - 1) / FRAME))).toBe(
        true,
      );
    }),
  );
});

test("a packed block takes far fewer bytes than its columns unpacked", () => {
  const sent = entries(1000);
  expect(encodeBlock(sent).length).toBeLessThan(v5Block(sent).length / 2);
});

// values that JSON and the encodings could alter: every control character, unpaired-free Unicode, numbers that print
// in exponent form or lose digits, nested arrays, empty objects, key order, keys that look like paths
const hostileText = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)), maxLength: 8 }),
  fc.constantFrom("", "\u0000", "\u2028\u2029", "ü☕𝄞", '"\\', "\ud83d\ude00"),
);
const hostileNumber = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(1e21, -0, 0.1, 2 ** 53 + 1, -1e-7, 123456789012345680000));
const hostileJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: "small" }, hostileText, hostileNumber, fc.boolean(), fc.constant(null), tie("array"), tie("object")),
  array: fc.array(tie("value"), { maxLength: 4 }),
  object: fc.oneof(fc.dictionary(hostileText, tie("value"), { maxKeys: 4 }), fc.constant({ "a.b": 1, a: { b: 2 } }), fc.constant({})),
})).value;
const hostileObject = fc.option(fc.dictionary(hostileText, hostileJson, { maxKeys: 5 }), { nil: null }) as fc.Arbitrary<Record<string, unknown> | null>;

test("any entry reads back through every format the same, as GET /logs/{id} would return it, and its raw size is that JSON's (property)", () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          level: fc.constantFrom("trace", "debug", "info", "warn", "error", "fatal"),
          action: hostileText,
          message: fc.option(hostileText, { nil: null }),
          tags: fc.array(hostileText, { maxLength: 3 }),
          clientMs: fc.oneof(
            fc.integer({ min: 0, max: 4e12 }),
            fc.integer({ min: -8.64e15, max: 8.64e15 }),
            fc.constantFrom(-62_167_219_200_001, 253_402_300_800_000),
          ),
          actor: hostileObject,
          target: hostileObject,
          context: hostileObject,
          metadata: hostileObject,
        }),
        { minLength: 1, maxLength: 300 },
      ),
      (drawn) => {
        const ids = nextIds(drawn.length).ids;
        const sent = drawn.map((e, i) => ({ ...e, id: ids[i] }) as Entry);
        const text = (b: Block) => Array.from({ length: b.size }, (_, i) => logEntryText("production", 7, b.entry(i)));
        const expected = sent.map((e) => JSON.stringify(toLogEntry("production", 7, e)));
        expect(text(Block.decode(7, encodeBlock(sent)))).toEqual(expected);
        expect(text(Block.decode(7, v5Block(sent)))).toEqual(expected);
        // the storage report's raw size, as the encoder measures it and as a stored block gives it back
        const raw = expected.reduce((n, t) => n + Buffer.byteLength(t), 0) - "production".length * sent.length;
        expect(encodeSized(sent).raw).toBe(raw);
        expect(Block.decode(7, v5Block(sent)).rawSize()).toBe(raw);
      },
    ),
    { numRuns: 60 },
  );
});

test("a block's ids are stored as bytes when they share the block's millisecond, and as text otherwise; both read back", () => {
  const sent = entries(300);
  const binary = encodeBlock(sent);
  const odd = sent.map((e, i) => ({ ...e, id: i === 7 ? e.id.toUpperCase() : e.id })).sort((a, b) => (a.id < b.id ? -1 : 1));
  const text = encodeBlock(odd);
  expect(text.length).toBeGreaterThan(binary.length); // 36 characters an id, compressed, against about 5 bytes
  for (const [value, ids] of [
    [binary, sent.map((e) => e.id)],
    [text, odd.map((e) => e.id)],
  ] as const) {
    const block = Block.decode(0, value);
    expect(Array.from({ length: 300 }, (_, i) => block.id(i))).toEqual([...ids]);
    expect(block.indexOf(ids[123])).toBe(123);
  }
});
