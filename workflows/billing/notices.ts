import type { NoticeText } from '../notify/mail-notice';
import type { SubscriptionStatus } from './billing.messages';

/**
 * The billing e-mails to a tenant's owners, as `notice` template fields (services/notify/templates.ts).
 * Pure, so the workflow decides what to say deterministically and the mail activity only renders it.
 */
export interface Notice extends NoticeText {
  /** Unique per tenant and occasion: it becomes the mail's idempotency key. */
  key: string;
}

const day = (iso: string): string => iso.slice(0, 10);

export function trialEndingNotice(trialEndsAt: string): Notice {
  return {
    key: `trial-ending:${trialEndsAt}`,
    subject: 'Your trial ends soon',
    text: `Your trial ends on ${day(trialEndsAt)}. Add a payment method to keep your workspace running without interruption.`,
  };
}

/** A dunning reminder of the past_due episode that began at `since`, `dayNumber` days in. */
export function dunningNotice(since: string, dayNumber: number, status: SubscriptionStatus, terminatesAt: string): Notice {
  const key = `dunning:${since}:${dayNumber}`;
  if (status === 'suspended') {
    return {
      key,
      subject: 'Your workspace is suspended: payment required',
      text: `We could not collect your payment. Your workspace is read-only until the payment arrives; all data is kept. `
        + `Without payment the workspace and its data will be deleted from ${day(terminatesAt)}.`,
    };
  }
  return {
    key,
    subject: 'Payment failed: please update your payment method',
    text: `We could not collect your payment. Your workspace keeps working for now; please pay the open invoice. `
      + `Without payment it becomes read-only, and its data will be deleted from ${day(terminatesAt)}.`,
  };
}

export function terminatedNotice(at: string): Notice {
  return {
    key: `terminated:${at}`,
    subject: 'Your workspace has been terminated',
    text: 'After 37 days without payment your workspace was terminated and its data is being deleted. Contact support at once if this is a mistake.',
  };
}

export function canceledNotice(at: string): Notice {
  return {
    key: `canceled:${at}`,
    subject: 'Your subscription has been canceled',
    text: 'Your subscription was canceled. You can subscribe again at any time.',
  };
}
