// channels: where notices go (contract §16): webhook, slack, email, alertmanager, each with its config checked field
// by field. Secrets (`secret`, `pass`, header values) are write-only: answers show "***", and a PATCH that sends "***"
// back keeps the stored value.
import { validationFailed, type FieldError } from "../errors.ts";

export const CHANNEL_TYPES = ["webhook", "slack", "email", "alertmanager"] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];
const HIDDEN = "***";

/** Channel is a stored channel, secrets in clear (they never leave through the API). */
export interface Channel {
  id: string;
  name: string;
  type: ChannelType;
  config: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function httpUrl(v: unknown): boolean {
  if (typeof v !== "string") return false;
  try {
    const u = new URL(v);
    return u.protocol === "http:" || u.protocol === "https:";
  } catch {
    return false;
  }
}

/** checkChannel merges `patch` onto `base` and checks it; it throws 400 VALIDATION_FAILED listing every bad field. */
export function checkChannel(patch: Record<string, unknown>, base?: Channel): Pick<Channel, "name" | "type" | "config"> {
  const errors: FieldError[] = [];
  const bad = (field: string, message: string) => errors.push({ field, message, log_index: null });
  const name = patch.name ?? base?.name;
  const type = patch.type ?? base?.type;
  if (typeof name !== "string" || name.trim().length === 0 || name.length > 200) bad("name", "name must be a string of 1 to 200 characters");
  if (!(CHANNEL_TYPES as readonly unknown[]).includes(type)) bad("type", `type must be one of ${CHANNEL_TYPES.join(", ")}`);
  const raw = patch.config ?? base?.config;
  if (!isObject(raw)) bad("config", "config must be an object; see contract §16 for each type's fields");
  if (errors.length) throw validationFailed(errors);
  const config = keepSecrets(raw as Record<string, unknown>, base?.type === type ? base?.config : undefined);
  switch (type as ChannelType) {
    case "webhook":
      if (!httpUrl(config.url)) bad("config.url", "config.url must be an http or https URL");
      if (config.headers !== undefined && (!isObject(config.headers) || Object.values(config.headers).some((h) => typeof h !== "string")))
        bad("config.headers", "config.headers must be an object of string values");
      if (config.secret !== undefined && (typeof config.secret !== "string" || config.secret.length === 0))
        bad("config.secret", "config.secret must be a non-empty string");
      break;
    case "slack":
    case "alertmanager":
      if (!httpUrl(config.url)) bad("config.url", "config.url must be an http or https URL");
      break;
    case "email": {
      const to = config.to;
      if (!Array.isArray(to) || to.length === 0 || to.some((a) => typeof a !== "string" || !a.includes("@")))
        bad("config.to", "config.to must be a non-empty array of addresses");
      if (typeof config.from !== "string" || !config.from.includes("@")) bad("config.from", "config.from must be an address such as alerts@example.com");
      const smtp = config.smtp;
      if (!isObject(smtp)) bad("config.smtp", 'config.smtp must be {"host", "port", "secure"?, "user"?, "pass"?}');
      else {
        if (typeof smtp.host !== "string" || smtp.host.length === 0) bad("config.smtp.host", "config.smtp.host must be a host name");
        if (typeof smtp.port !== "number" || !Number.isInteger(smtp.port) || smtp.port < 1 || smtp.port > 65535)
          bad("config.smtp.port", "config.smtp.port must be a port number");
        if (smtp.secure !== undefined && typeof smtp.secure !== "boolean") bad("config.smtp.secure", "config.smtp.secure must be true or false");
        for (const k of ["user", "pass"])
          if (smtp[k] !== undefined && typeof smtp[k] !== "string") bad(`config.smtp.${k}`, `config.smtp.${k} must be a string`);
      }
      break;
    }
  }
  if (errors.length) throw validationFailed(errors);
  return { name: name as string, type: type as ChannelType, config };
}

/** keepSecrets replaces "***" sent back by a client with the stored secret it stands for. */
function keepSecrets(config: Record<string, unknown>, stored: Record<string, unknown> | undefined): Record<string, unknown> {
  const out = structuredClone(config);
  if (!stored) return out;
  if (out.secret === HIDDEN) out.secret = stored.secret;
  if (isObject(out.headers) && isObject(stored.headers)) {
    for (const [k, v] of Object.entries(out.headers)) if (v === HIDDEN) out.headers[k] = stored.headers[k];
  }
  if (isObject(out.smtp) && isObject(stored.smtp) && out.smtp.pass === HIDDEN) out.smtp.pass = stored.smtp.pass;
  return out;
}

/** shown is a channel as answers show it: secrets replaced by "***". */
export function shown(c: Channel): Channel {
  const config = structuredClone(c.config);
  if (config.secret !== undefined) config.secret = HIDDEN;
  if (isObject(config.headers)) for (const k of Object.keys(config.headers)) config.headers[k] = HIDDEN;
  if (isObject(config.smtp) && config.smtp.pass !== undefined) config.smtp.pass = HIDDEN;
  return { ...c, config };
}
