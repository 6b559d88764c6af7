import type { ModuleSubscriber, SubscribedEvent, SubscriberContext } from '../../common/event-subscribers';

/**
 * The event subscribers of the crm module (common/event-subscribers.ts), run by the worker as the
 * consumer groups `crm.<name>` for the tenants that have crm installed and active.
 */

/**
 * A contact's first name for a new user: the whole display name (identity sends "first last", or
 * the address when the user gave no name), since splitting a name into parts would be a guess; an
 * address as display name, or none, becomes its local part (`ada.lovelace@…` → `ada.lovelace`).
 */
export function contactNameOf(displayName: unknown, email: string): string {
  const name = typeof displayName === 'string' ? displayName.trim() : '';
  if (name && name.toLowerCase() !== email.toLowerCase()) return name;
  return email.slice(0, email.lastIndexOf('@') > 0 ? email.lastIndexOf('@') : email.length);
}

/** Every new user of the tenant becomes a contact (auth.user.created: user_id, email, display_name …). */
async function createContactForUser(event: SubscribedEvent, context: SubscriberContext): Promise<void> {
  const { email, display_name: displayName } = event.data;
  if (typeof email !== 'string' || email === '') throw new TypeError(`${event.type} ${event.id} carries no email`);
  await context.createRecord('contacts', { firstName: contactNameOf(displayName, email), email });
}

export const subscribers: readonly ModuleSubscriber[] = [
  { name: 'user-created', events: ['auth.user.created'], handle: createContactForUser },
];
