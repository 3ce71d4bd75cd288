// email: sends an email notice over SMTP with nodemailer, loaded on first use so that a server without email
// channels never loads it.
import type { SendMail } from "./deliver.ts";

/** sendMail sends one plain-text email as an email channel's config says (to, from, smtp). */
export const sendMail: SendMail = async (config, subject, text) => {
  const { createTransport } = await import("nodemailer");
  const smtp = config.smtp as { host: string; port: number; secure?: boolean; user?: string; pass?: string };
  const transport = createTransport({
    host: smtp.host,
    port: smtp.port,
    secure: smtp.secure ?? false,
    ...(smtp.user ? { auth: { user: smtp.user, pass: smtp.pass ?? "" } } : {}),
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 10_000,
  });
  try {
    await transport.sendMail({ from: config.from as string, to: (config.to as string[]).join(", "), subject, text });
  } finally {
    transport.close();
  }
};
