import { ApplicationFailure } from '@temporalio/activity';
import { deliverEmail, finalRejection, type DeliverDeps, type DeliverEmailInput } from '../../services/notify/deliver';

export type { DeliverEmailInput };

export function createNotifyActivities(deps: DeliverDeps) {
  return {
    /**
     * Renders and sends one mail (services/notify/deliver.ts). A refused connection, a timeout or a
     * 4xx reply fails the attempt and the workflow's retry policy tries again, so an outage delays
     * mail but loses none. A 5xx reply is the server's final word on this message: it fails for
     * good, typed `mail-rejected`, instead of retrying for days.
     */
    async deliverEmail(input: DeliverEmailInput): Promise<void> {
      try {
        await deliverEmail(deps, input);
      } catch (error) {
        const reply = finalRejection(error);
        if (reply !== undefined) throw ApplicationFailure.nonRetryable(`SMTP refused the message (${reply})`, 'mail-rejected');
        throw error;
      }
    },
  };
}

export type NotifyActivities = ReturnType<typeof createNotifyActivities>;
