import type { Logger } from '../../common/logger';
import type { SmtpSender } from './smtp';
import { renderEmail, type EmailMessage } from './templates';

export interface DeliverDeps {
  smtp: SmtpSender;
  logger: Logger;
}

export interface DeliverEmailInput {
  message: EmailMessage;
  /** The workflow's idempotency key; it becomes the Message-ID, so a resent copy is the same message. */
  idempotencyKey: string;
}

/**
 * The reply code when the SMTP server refused the message for good (5xx: no such mailbox, refused
 * content), which no retry changes; undefined for a refused connection, a timeout or a 4xx reply
 * (the server's "try later"). nodemailer sets responseCode when the server answered.
 */
export function finalRejection(error: unknown): number | undefined {
  const code = (error as { responseCode?: unknown } | null)?.responseCode;
  return typeof code === 'number' && code >= 500 ? code : undefined;
}

/** Renders and sends one mail; the SMTP error as it came when the server does not take it. */
export async function deliverEmail({ smtp, logger }: DeliverDeps, { message, idempotencyKey }: DeliverEmailInput): Promise<void> {
  const rendered = renderEmail(message);
  await smtp.send({ ...rendered, to: message.to, messageId: `<${idempotencyKey}@platform.local>` });
  logger.info({ template: message.template, idempotencyKey }, 'e-mail sent');
}
