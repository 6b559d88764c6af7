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
 * Opens the stack of the test file `file-<name>` in beforeAll (the bucket test-files-<name>, the pools
 * file-<name>-test and file-<name>-test-app) and closes it in afterAll; its fields are set once
 * beforeAll has run. The workflow bundle is built meanwhile, as every worker of the file needs it.
 */
export function useFilesWorkflowStack<T extends TestWorkflowEnvironment | DevServer>(
  name: string, connect: () => Promise<T>,
): FilesWorkflowStack<T> {
  return openedBeforeAll(async () => {
    await Promise.all([migrateSharedDatabase(), platformBundle()]);
    const [temporal, bucket] = await Promise.all([connect(), createTestBucket(`test-files-${name}`)]);
    const owner = await createDbPool(ownerUrl(), { maxPoolSize: 4, name: `file-${name}-test` });
    const app = await createDbPool(appUrl(), { maxPoolSize: 4, name: `file-${name}-test-app` });
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
  });
}
