// API key secrets: format sl_{environment}_{type}_{random}, hashing, hints and scope grants (contract §2, §3).
import { test, expect, describe } from "bun:test";
import { createHash } from "node:crypto";
import { DEFAULT_SCOPES, generateSecret, grants, hashSecret, hintOf, looksLikeKey } from "../../../src/auth/keys.ts";

const ENVS = ["development", "staging", "production"] as const;
const TYPES = ["ro", "wo", "rw"] as const;
const R32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef"; // 32 characters of [A-Za-z0-9]

describe("generateSecret: sl_{environment}_{type}_{random}", () => {
  for (const env of ENVS) {
    for (const type of TYPES) {
      test(`${env}/${type}: prefix sl_${env}_${type}_ then at least 32 of [A-Za-z0-9]`, () => {
        const s = generateSecret(env, type);
        const prefix = `sl_${env}_${type}_`;
        expect(s.startsWith(prefix)).toBe(true);
        const random = s.slice(prefix.length);
        expect(random).toMatch(/^[A-Za-z0-9]+$/);
        expect(random.length).toBeGreaterThanOrEqual(32);
      });
    }
  }

  test("secrets differ (1,000 draws, no repeat)", () => {
    const all = new Set(Array.from({ length: 1_000 }, () => generateSecret("production", "rw")));
    expect(all.size).toBe(1_000);
  });

  test("the random part draws on the whole [A-Za-z0-9] alphabet", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 400; i++) for (const c of generateSecret("staging", "ro").slice("sl_staging_ro_".length)) seen.add(c);
    expect(seen.size).toBe(62);
  });
});

describe("looksLikeKey: the key format", () => {
  test("accepts generated secrets of every environment and type", () => {
    for (const env of ENVS) for (const type of TYPES) expect(looksLikeKey(generateSecret(env, type))).toBe(true);
  });

  const accepted: [string, string][] = [
    ["exactly 32 random characters", `sl_development_rw_${R32}`],
    ["digits only in the random part", `sl_production_ro_${"7".repeat(40)}`],
    ["staging write-only", `sl_staging_wo_${R32}1234`],
  ];
  for (const [name, text] of accepted) test(`accepts ${name}`, () => expect(looksLikeKey(text)).toBe(true));

  const rejected: [string, string][] = [
    ["31 random characters", `sl_development_rw_${R32.slice(1)}`],
    ["another product prefix", `sk_development_rw_${R32}`],
    ["uppercase prefix", `SL_development_rw_${R32}`],
    ["unknown environment", `sl_prod_rw_${R32}`],
    ["uppercase environment", `sl_Production_rw_${R32}`],
    ["unknown type", `sl_development_xx_${R32}`],
    ["missing type", `sl_development_${R32}`],
    ["missing random part", "sl_development_rw_"],
    ["a hyphen in the random part", `sl_development_rw_${R32.slice(1)}-`],
    ["an underscore in the random part", `sl_development_rw_${R32}_x`],
    ["a non-ASCII letter in the random part", `sl_development_rw_${R32.slice(1)}é`],
    ["leading space", ` sl_development_rw_${R32}`],
    ["trailing newline", `sl_development_rw_${R32}\n`],
    ["scheme in front", `ApiKey sl_development_rw_${R32}`],
    ["empty string", ""],
  ];
  for (const [name, text] of rejected) test(`rejects ${name}`, () => expect(looksLikeKey(text)).toBe(false));
});

describe("hashSecret: SHA-256 hex", () => {
  test("the FIPS 180-2 vector for abc", () => {
    expect(hashSecret("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });
  test("the empty string", () => {
    expect(hashSecret("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  });
  test("equals node:crypto SHA-256 of the UTF-8 secret", () => {
    for (const s of [generateSecret("production", "rw"), `sl_development_ro_${R32}`, "token with é and 😀"]) {
      expect(hashSecret(s)).toBe(createHash("sha256").update(Buffer.from(s, "utf8")).digest("hex"));
    }
  });
  test("is 64 lowercase hex digits and differs from the secret", () => {
    const s = generateSecret("staging", "wo");
    expect(hashSecret(s)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashSecret(s)).not.toContain(s.slice(-8));
  });
  test("different secrets give different hashes", () => {
    expect(hashSecret(`sl_development_rw_${R32}`)).not.toBe(hashSecret(`sl_development_rw_${R32.slice(0, -1)}g`));
  });
});

describe("hintOf: first 12 characters, …, last 4", () => {
  test("a fixed secret", () => {
    expect(hintOf(`sl_development_rw_${R32}`)).toBe("sl_developme…cdef");
  });
  test("the separator is the single character U+2026", () => {
    const hint = hintOf(`sl_production_ro_${R32}WXYZ`);
    expect(hint).toBe("sl_productio\u2026WXYZ");
    expect(hint.length).toBe(17);
  });
  test("a generated secret", () => {
    const s = generateSecret("staging", "rw");
    const hint = hintOf(s);
    expect(hint.startsWith("sl_staging_r")).toBe(true);
    expect(hint.endsWith(`…${s.slice(s.length - 4)}`)).toBe(true);
    expect(hint.length).toBe(17);
  });
});

describe("grants: what each scope permits", () => {
  const rows: [string, string[], boolean, boolean][] = [
    // name, scopes, grants logs:read, grants logs:write
    ["logs:read grants read only", ["logs:read"], true, false],
    ["logs:write grants write only", ["logs:write"], false, true],
    ["logs:read and logs:write grant both", ["logs:read", "logs:write"], true, true],
    ["rw grants both", ["rw"], true, true],
    ["* grants both", ["*"], true, true],
    ["* beside logs:read grants both", ["logs:read", "*"], true, true],
    ["no scopes grant nothing", [], false, false],
    ["an unknown scope grants nothing", ["logs:delete"], false, false],
    ["scopes are case-sensitive", ["LOGS:READ", "Logs:Write"], false, false],
    ["a prefix of a scope grants nothing", ["logs"], false, false],
  ];
  for (const [name, scopes, read, write] of rows) {
    test(name, () => {
      expect(grants(scopes, "logs:read")).toBe(read);
      expect(grants(scopes, "logs:write")).toBe(write);
    });
  }

  test("default scopes per type: ro reads, wo writes, rw does both", () => {
    expect(DEFAULT_SCOPES.ro).toEqual(["logs:read"]);
    expect(DEFAULT_SCOPES.wo).toEqual(["logs:write"]);
    expect(DEFAULT_SCOPES.rw).toEqual(["logs:read", "logs:write"]);
    expect([grants(DEFAULT_SCOPES.ro, "logs:read"), grants(DEFAULT_SCOPES.ro, "logs:write")]).toEqual([true, false]);
    expect([grants(DEFAULT_SCOPES.wo, "logs:read"), grants(DEFAULT_SCOPES.wo, "logs:write")]).toEqual([false, true]);
    expect([grants(DEFAULT_SCOPES.rw, "logs:read"), grants(DEFAULT_SCOPES.rw, "logs:write")]).toEqual([true, true]);
  });
});
