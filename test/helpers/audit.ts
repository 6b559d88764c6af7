import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { createKafka, createTopics, deleteTopics, type Kafka } from '../../common/kafka';
import type { Logger } from '../../common/logger';
import { config } from '../../common/config';
import { createMigratedDatabase, type MigratedDatabase } from './db';

/**
 * The audit tests run on a scratch database and a Kafka topic of their own: the running audit
 * consumer of the platform must not take their records, and stored audit records can never be
 * deleted, so they must not land in the shared database.
 */

export type AuditDatabase = MigratedDatabase;

export const createAuditDatabase = (prefix: string): Promise<AuditDatabase> =>
  createMigratedDatabase(prefix, { ownerPoolSize: 6, appPoolSize: 2 });

export interface TestTopic {
  name: string;
  kafka: Kafka;
  drop(): Promise<void>;
}

/** A topic of its own for one test file, deleted afterwards. */
export async function createTestTopic(prefix: string, partitions = 3): Promise<TestTopic> {
  const name = `test.${prefix}.${randomBytes(4).toString('hex')}`;
  const kafka = createKafka(config().kafka);
  const admin = kafka.admin();
  await admin.connect();
  try {
    await createTopics(admin, [{ name, partitions, replicationFactor: 1, configs: {} }]);
  } finally {
    await admin.disconnect();
  }
  return {
    name,
    kafka,
    drop: async () => {
      const cleaner = kafka.admin();
      await cleaner.connect();
      try {
        await deleteTopics(cleaner, [name]);
      } finally {
        await cleaner.disconnect();
      }
    },
  };
}

export const quietLogger = (): Logger => pino({ level: 'silent' });

/** Polls `probe` until it returns true; rejects with `what` after timeoutMs. */
export async function eventually(probe: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
