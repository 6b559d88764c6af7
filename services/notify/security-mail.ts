import type { Kafka } from '../../common/kafka';
import type { Logger } from '../../common/logger';
import type { DatabasePool } from '../../db/pool';
import { selectUserProfile } from '../../db/queries/identity/users.queries';
import { GroupConsumer, type ConsumerSettings, type Delivery, type TransactionalHandler } from '../events/consumers/group-consumer';
import { topics } from '../events/topics';
import type { Mailer } from './mailer';
import type { SecurityChange } from './templates';

/**
 * The account holder's security notices (ASVS 2.2.3, 2.5.5, 2.8.5; docs/reference/identity.md, Rules:
 * password change and security mail): a platform consumer group of the auth topic that mails the
 * holder when the password, two-factor, the recovery codes or a linked provider changes, and when a
 * used two-factor code is tried at sign-in. The identity flows write those events in the
 * transaction of the change (services/identity/events.ts), so a mail exists exactly when the change
 * committed, and survives a crash after the commit: the group reads it from the topic, where the
 * relay put it. The mail's idempotency key is the event id, so an event handled twice (a redelivery,
 * two members of the group after a rebalance) is one mail.
 */
export const SECURITY_MAIL_GROUP = 'notify.security-mail';

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** auth.password.changed by its method; a set-password link (a new account's first password) changes nothing its holder had. */
const PASSWORD_CHANGED = 'auth.password.changed';
const PASSWORD_CHANGES: Readonly<Record<string, SecurityChange>> = { reset: 'password-reset', change: 'password-changed' };

/** The other events the holder is told of, with the change each reports. */
const CHANGES: Readonly<Record<string, SecurityChange>> = {
  'auth.mfa.enabled': 'mfa-enabled',
  'auth.mfa.disabled': 'mfa-disabled',
  'auth.recovery_codes.regenerated': 'recovery-codes-regenerated',
  'auth.provider.linked': 'provider-linked',
  'auth.provider.unlinked': 'provider-unlinked',
  'auth.mfa.code_reused': 'mfa-code-reused',
};

const accepts = (type: string): boolean => type === PASSWORD_CHANGED || Object.hasOwn(CHANGES, type);

function changeOf(type: string, data: Record<string, unknown>): SecurityChange | null {
  const change = type === PASSWORD_CHANGED ? PASSWORD_CHANGES[text(data.method) ?? ''] : CHANGES[type];
  return change ?? null;
}

/**
 * Reads the holder's address in the event's tenant transaction (the account as it is now: a
 * deleted account gets no mail) and hands the mail to the sendEmail workflow.
 */
export function securityMailHandler(mailer: Pick<Mailer, 'send'>): TransactionalHandler {
  return {
    kind: 'transactional',
    async handle({ event: { envelope } }: Delivery, tx) {
      const change = changeOf(envelope.type, envelope.data);
      const userId = text(envelope.data.user_id);
      if (!change || !userId) return;
      const holder = await selectUserProfile(tx, userId);
      if (!holder || holder.deletedAt !== null) return;
      await mailer.send({
        to: holder.email,
        template: 'security-change',
        data: {
          change, occurredAt: envelope.timestamp,
          ...(text(envelope.data.provider_id) && { provider: text(envelope.data.provider_id) }),
          ...(text(envelope.data.ip) && { ip: text(envelope.data.ip) }),
        },
      }, `security:${envelope.id}`, envelope.tenantId);
    },
  };
}

export interface SecurityMailDeps {
  kafka: Kafka;
  /** The application role: each event is handled in its own tenant's transaction. */
  db: DatabasePool;
  logger: Logger;
  settings: ConsumerSettings;
  mailer: Pick<Mailer, 'send'>;
  partitionsConcurrently?: number;
  /** Tests run the group under an id of their own, for their own tenants only. */
  groupId?: string;
  tenantsServed?: (tenantIds: readonly string[]) => Promise<ReadonlySet<string>>;
}

/**
 * The group, run by the worker beside the modules' subscribers (workers/consumers/platform-groups.ts).
 * Its first start reads from the topic's end: a notice of a change long past would only alarm.
 */
export function createSecurityMailConsumer(deps: SecurityMailDeps): GroupConsumer {
  return new GroupConsumer({
    kafka: deps.kafka, db: deps.db, logger: deps.logger, settings: deps.settings,
    groupId: deps.groupId ?? SECURITY_MAIL_GROUP,
    topic: topics.auth.name,
    tenantId: null,
    accepts,
    handler: securityMailHandler(deps.mailer),
    tenantsServed: deps.tenantsServed,
    fromBeginning: false,
    partitionsConcurrently: deps.partitionsConcurrently,
  });
}
