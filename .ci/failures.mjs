// Prints each failed test of a JUnit report (bun test --reporter=junit) with its error, so that the end of a CI log,
// which is often all that is kept, says why a test failed and not only which.
import { existsSync, readFileSync } from "node:fs";

const file = process.argv[2];
if (!file || !existsSync(file)) process.exit(0);
const xml = readFileSync(file, "utf8");
const unescape = (s) =>
  s.replace(/&#10;/g, "\n").replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
const attribute = (tag, name) => unescape(new RegExp(`\\b${name}="([^"]*)"`).exec(tag)?.[1] ?? "");
for (const [, open, body] of xml.matchAll(/<testcase\b([^>]*[^/])>([\s\S]*?)<\/testcase>/g)) {
  const failure = /<failure\b[^>]*>([\s\S]*?)<\/failure>/.exec(body);
  if (!failure) continue;
  const lines = unescape(failure[1]).trimEnd().split("\n");
  console.log(`\n(fail) ${attribute(open, "file")}:${attribute(open, "line")} ${attribute(open, "name")}`);
  console.log(lines.slice(0, 60).join("\n") + (lines.length > 60 ? `\n… ${lines.length - 60} more lines` : ""));
}
