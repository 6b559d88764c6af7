import { z } from 'zod';
import type { DatabasePoolConnection } from 'slonik';
import { sql } from '../../pool';

const lockedRow = z.object({ locked: z.boolean() });

/**
 * Coordination of outbox relays. Exactly one relay publishes at a time: the one holding this
 * session-level advisory lock. The lock belongs to a database session, so it is taken on a dedicated
 * connection (hence DatabasePoolConnection, not the pool) and is released by PostgreSQL the moment
 * that session ends, including when the relay process is killed.
 */
const relayLock = sql.fragment`hashtextextended('platform:outbox-relay', 0)`;

export function tryLockOutboxRelay(session: DatabasePoolConnection): Promise<boolean> {
  return session.oneFirst(sql.type(lockedRow)`
    SELECT pg_try_advisory_lock(${relayLock}) AS locked
  `);
}

export async function unlockOutboxRelay(session: DatabasePoolConnection): Promise<void> {
  await session.query(sql.unsafe`SELECT pg_advisory_unlock(${relayLock})`);
}

/** The channel the outbox_events insert trigger of migration 0001 notifies. */
export const OUTBOX_CHANNEL = 'outbox_events';
