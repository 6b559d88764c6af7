import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { config } from '../../common/config';
import { createDbPool, type DatabasePool } from '../../db/pool';
import { createSmtpSender, type SmtpSender } from '../../services/notify/smtp';
import { createTestBucket, type TestBucket } from './audit-export';
import { appUrl, migrateSharedDatabase, ownerUrl } from './db';
import { seedFilesTenant, type FilesTenant } from './files-scan';
import { openedBeforeAll } from './lifecycle';
import { platformBundle, type DevServer } from './temporal';

/**
 * What the files workflows' tests run against: a Temporal server, PostgreSQL as the owner (the
 * tests' look into the rows) and as the application role (the activities'), a bucket of the test,
 * the SMTP sender of the mail activity (Mailpit) and a tenant seeded with its owner, admin and member.
 */
export interface FilesWorkflowStack<T extends TestWorkflowEnvironment | DevServer> {
  /** The time-skipping server (createTimeSkippingEnv), or the dev server (connectDevServer) for what it lacks. */
  temporal: T;
  owner: DatabasePool;
  app: DatabasePool;
  bucket: TestBucket;
  smtp: SmtpSender;
  tenant: FilesTenant;
  close(): Promise<void>;
}

/**
 * Opens the stack `name` (the bucket `name`-…, the pools `name` and `name`-app), building the workflow
 * bundle meanwhile, as every worker on it needs it; close() ends it all. For a test file,
 * useFilesWorkflowStack; the replay recorders (test/replay/recording.ts) open it themselves.
 */
export async function startFilesWorkflowStack<T extends TestWorkflowEnvironment | DevServer>(
  name: string, connect: () => Promise<T>,
): Promise<FilesWorkflowStack<T>> {
  await Promise.all([migrateSharedDatabase(), platformBundle()]);
  const [temporal, bucket] = await Promise.all([connect(), createTestBucket(name)]);
  const owner = await createDbPool(ownerUrl(), { maxPoolSize: 4, name });
  const app = await createDbPool(appUrl(), { maxPoolSize: 4, name: `${name}-app` });
  const smtp = createSmtpSender(config().mail);
  const tenant = await seedFilesTenant(owner);
  return {
    temporal, owner, app, bucket, smtp, tenant,
    async close() {
      await ('teardown' in temporal ? temporal.teardown() : temporal.close());
      await bucket.remove();
      smtp.close();
      await owner.end();
      await app.end();
    },
  };
}

/**
 * The stack of the workflow test of `file-<name>` (the bucket test-files-<name>), opened in beforeAll
 * and closed in afterAll; its fields are set once beforeAll has run.
 */
export function useFilesWorkflowStack<T extends TestWorkflowEnvironment | DevServer>(
  name: string, connect: () => Promise<T>,
): FilesWorkflowStack<T> {
  return openedBeforeAll(() => startFilesWorkflowStack(`test-files-${name}`, connect));
}
