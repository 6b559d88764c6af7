import nodemailer from 'nodemailer';
import type { Config } from '../../common/config';
import type { RenderedEmail } from './templates';

export interface OutgoingEmail extends RenderedEmail {
  to: string;
  /** A stable Message-ID: a mail sent twice (a retry after a lost acknowledgement) is one message to a client. */
  messageId: string;
}

export interface SmtpSender {
  send(email: OutgoingEmail): Promise<void>;
  close(): void;
}

/**
 * SMTP delivery with nodemailer (Mailpit locally). A pooled transport keeps a few connections open
 * for a burst of mails; timeouts are short so an unreachable server fails the attempt quickly and
 * the activity's retry policy, not a hanging socket, decides when to try again.
 */
export function createSmtpSender(mail: Config['mail']): SmtpSender {
  const transport = nodemailer.createTransport({
    host: mail.smtpHost,
    port: mail.smtpPort,
    secure: false,
    pool: true,
    maxConnections: 3,
    connectionTimeout: 5000,
    greetingTimeout: 5000,
    socketTimeout: 15_000,
    // Mailpit speaks plain SMTP; a server that offers STARTTLS still gets it.
    ignoreTLS: false,
  });
  return {
    async send(email) {
      await transport.sendMail({ from: mail.from, to: email.to, subject: email.subject, text: email.text, html: email.html, messageId: email.messageId });
    },
    close: () => transport.close(),
  };
}
