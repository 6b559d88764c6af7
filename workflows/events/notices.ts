import type { NoticeText } from '../notify/mail-notice';

/** The mail to the tenant's owners when the platform turns an endpoint off. Pure: the workflow decides what it says. */
export function endpointDisabledNotice(endpointId: string, url: string): NoticeText {
  return {
    subject: 'A webhook endpoint was turned off after 5 days of failed deliveries',
    text: `Every delivery to the webhook endpoint ${url} (${endpointId}) failed for 5 days, so it was turned off. `
      + 'No events are sent to it until it is turned on again.\n\n'
      + `The events it did not receive are dead letters of the consumer group webhooks.${endpointId} (GET /v1/integrations/dlq). `
      + 'Once the receiver answers again, turn the endpoint on (PATCH /v1/webhooks/endpoints/{id} with enabled: true) '
      + 'and retry those dead letters.',
  };
}
