// An entry as Loki sees it (contract §17): stream labels, structured metadata, line, label names.
import { expect, test } from "bun:test";
import { flatten, labelName, leafNames, lokiEntry } from "../../../src/loki/labels.ts";
import type { Entry } from "../../../src/storage/entries.ts";

const base: Entry = {
  id: "01900000-0000-7000-8000-000000000001",
  level: "warn",
  action: "user.login",
  message: "hello",
  tags: [],
  clientMs: 1_700_000_000_123,
  actor: null,
  target: null,
  context: null,
  metadata: null,
};

test("label names: every character outside [a-zA-Z0-9_] becomes _, and a leading digit gets _ before it", () => {
  expect(["k-8", "http.status", "ünï", "1st", "ok_1"].map(labelName)).toEqual(["k_8", "http_status", "_n_", "_1st", "ok_1"]);
});

test("stream labels: environment, level, detected_level, action, service_name, context leaves joined with _ (the fixed ones win)", () => {
  const e = lokiEntry({ ...base, context: { region: "eu", k8s: { pod: "p-1", ready: true, n: 3, gone: null, list: [1] }, level: "shadowed" } }, "staging");
  expect(e.stream).toEqual({
    region: "eu",
    k8s_pod: "p-1",
    k8s_ready: "true",
    k8s_n: "3",
    environment: "staging",
    level: "warn",
    detected_level: "warn",
    action: "user.login",
    service_name: "user.login",
  });
  expect(lokiEntry({ ...base, context: { service: { name: "api" } } }, "staging").stream.service_name).toBe("api");
  expect(lokiEntry({ ...base, context: { service_name: "web", service: { name: "api" } } }, "staging").stream.service_name).toBe("web");
});

test("structured metadata: actor_, target_, metadata_ leaves, tags comma-joined, sluice_id; the line is message, else metadata's JSON", () => {
  const e = lokiEntry(
    { ...base, message: null, tags: ["a", "b"], actor: { id: "u1" }, target: { doc: { id: 7 } }, metadata: { http: { status: 500 } } },
    "production",
  );
  expect(e.metadata).toEqual({ actor_id: "u1", target_doc_id: "7", metadata_http_status: "500", tags: "a,b", sluice_id: base.id });
  expect(e.line).toBe('{"http":{"status":500}}');
  expect(lokiEntry(base, "production").line).toBe("hello");
  expect(lokiEntry({ ...base, message: null }, "production").line).toBe("");
});

test("leafNames gives the names flatten gives, without their values", () => {
  const objects: Record<string, unknown>[] = [
    { a: 1, b: { c: "x", d: null, e: [1] }, "f.g": true, "9h": "y" },
    { service: { name: "api" }, nested: { deeper: { leaf: 0 } }, empty: {} },
  ];
  for (const o of objects) {
    const names = new Set<string>();
    leafNames(o, "", names);
    expect([...names].sort()).toEqual(Object.keys(flatten(o, "", {})).sort());
  }
});
