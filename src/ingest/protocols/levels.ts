// levels: the one level table of contract §11, shared by every protocol: names, OTel severity numbers, syslog
// severities and pino's numbers map to Sluice's six levels; anything else is info.
import type { Level } from "../../schema.ts";

const NAMES: Record<string, Level> = {
  trace: "trace",
  verbose: "trace",
  debug: "debug",
  dbug: "debug",
  info: "info",
  information: "info",
  informational: "info",
  notice: "info",
  warn: "warn",
  warning: "warn",
  error: "error",
  err: "error",
  eror: "error",
  fatal: "fatal",
  critical: "fatal",
  crit: "fatal",
  alert: "fatal",
  emerg: "fatal",
  emergency: "fatal",
  panic: "fatal",
};

/** levelOfName maps a level name case-insensitively; undefined when the table lacks it. */
export function levelOfName(name: unknown): Level | undefined {
  if (typeof name !== "string") return undefined;
  const key = name.trim().toLowerCase();
  return Object.hasOwn(NAMES, key) ? NAMES[key] : undefined;
}

/** levelOfOtel maps an OTel severityNumber (1–24, 0 unspecified); undefined outside the table. */
export function levelOfOtel(n: number): Level | undefined {
  if (!Number.isInteger(n) || n < 0 || n > 24) return undefined;
  if (n === 0) return "info";
  return BY_RANK[Math.floor((n - 1) / 4)];
}

const BY_RANK: readonly Level[] = ["trace", "debug", "info", "warn", "error", "fatal"];

const SYSLOG: readonly Level[] = ["fatal", "fatal", "fatal", "error", "warn", "info", "info", "debug"];

/** levelOfSyslog maps a syslog severity 0–7. */
export const levelOfSyslog = (severity: number): Level => SYSLOG[severity] ?? "info";

/** levelOfPino maps pino's numbers (10 trace, 20 debug, 30 info, 40 warn, 50 error, 60 fatal); undefined for others. */
export function levelOfPino(n: number): Level | undefined {
  const i = n / 10 - 1;
  return Number.isInteger(i) && i >= 0 && i <= 5 ? BY_RANK[i] : undefined;
}

/** levelOf maps a level field of unknown type: a name, or a number read as pino's (a numeric string too). */
export function levelOf(value: unknown): Level | undefined {
  if (typeof value === "number") return levelOfPino(value);
  const named = levelOfName(value);
  if (named || typeof value !== "string" || !/^\d{2}$/.test(value.trim())) return named;
  return levelOfPino(Number(value));
}
