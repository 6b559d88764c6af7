import { ApplicationFailure } from '@temporalio/activity';
import type { Logger } from '../../common/logger';
import type { SmtpSender } from '../../services/notify/smtp';
import { renderEmail, type EmailMessage } from '../../services/notify/templates';

export interface NotifyDeps {
  smtp: SmtpSender;
  logger: Logger;
}

export interface DeliverEmailInput {
  message: EmailMessage;
  /** The workflow's idempotency key; it becomes the Message-ID, so a resent copy is the same message. */
  idempotencyKey: string;
}

/** The reply code of an SMTP error (nodemailer sets responseCode when the server answered). */
function smtpReplyCode(error: unknown): number | undefined {
  const code = (error as { responseCode?: unknown } | null)?.responseCode;
  return typeof code === 'number' ? code : undefined;
}

export function createNotifyActivities({ smtp, logger }: NotifyDeps) {
  return {
    /**
     * Renders and sends one mail. A refused connection, a timeout or a 4xx reply (the server's "try
     * later") fails the attempt and the workflow's retry policy tries again, so an outage delays mail
     * but loses none. A 5xx reply is the server's final word on this message (no such mailbox,
     * refused content): it fails for good, typed `mail-rejected`, instead of retrying for days.
     */
    async deliverEmail({ message, idempotencyKey }: DeliverEmailInput): Promise<void> {
      const rendered = renderEmail(message);
      try {
        await smtp.send({ ...rendered, to: message.to, messageId: `<${idempotencyKey}@platform.local>` });
      } catch (error) {
        const reply = smtpReplyCode(error);
        if (reply !== undefined && reply >= 500) {
          throw ApplicationFailure.nonRetryable(`SMTP refused the message (${reply})`, 'mail-rejected');
        }
        throw error;
      }
      logger.info({ template: message.template, idempotencyKey }, 'e-mail sent');
    },
  };
}

export type NotifyActivities = ReturnType<typeof createNotifyActivities>;
