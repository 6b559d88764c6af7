import { createObjectStore, type ObjectStore } from '../../common/object-store';
import { createDbPool, type DatabasePool } from '../../db/pool';
import { startTestGateway, type TestGateway } from './app';
import { migrateSharedDatabase, ownerUrl } from './db';
import { unpolledTaskQueue, type Problem } from './files';
import { registerAccount, type RegisteredAccount } from './identity';
import { openedBeforeAll } from './lifecycle';
import { terminateRunningOn } from './temporal';

/**
 * The files routes against the real gateway, PostgreSQL and object store, with two tenants: the
 * workflows the gateway starts (scans, trash timers) go to a task queue no worker polls, so a test
 * decides itself what a scan or a timer would have done (helpers/files makeAvailable, setStatus).
 */
export interface FilesApiStack {
  gateway: TestGateway;
  /** The owner role: the tests' look into the `files` rows and the usage counters. */
  owner: DatabasePool;
  store: ObjectStore;
  account: RegisteredAccount;
  /** Another tenant's account: every one of `account`'s files is 404 to it. */
  stranger: RegisteredAccount;
  close(): Promise<void>;
}

/**
 * A ready gateway whose files workflows go to a task queue no worker polls, `env` on top of the test
 * defaults. Closing it also ends the workflows it left on that queue (terminateRunningOn).
 */
export async function startFilesGateway(env: Record<string, string> = {}): Promise<TestGateway> {
  const unpolled = unpolledTaskQueue();
  const gateway = await startTestGateway({ env: { FILES_TASK_QUEUE: unpolled, ...env }, waitUntilReady: true });
  const ownQueue = env.FILES_TASK_QUEUE === undefined;
  return {
    ...gateway,
    async close() {
      const client = gateway.runtime.temporal()?.client;
      if (ownQueue && client) await terminateRunningOn(client, unpolled);
      await gateway.close();
    },
  };
}

export async function startFilesApiStack(name: string): Promise<FilesApiStack> {
  await migrateSharedDatabase();
  const [gateway, owner] = await Promise.all([startFilesGateway(), createDbPool(ownerUrl(), { maxPoolSize: 2, name })]);
  const [account, stranger] = await Promise.all([registerAccount(gateway), registerAccount(gateway)]);
  return {
    gateway, owner, store: createObjectStore(gateway.config.s3), account, stranger,
    async close() {
      await gateway.close();
      await owner.end();
    },
  };
}

/** The stack of a test file, opened in beforeAll and closed in afterAll; its fields are set once beforeAll has run. */
export function useFilesApiStack(name: string): FilesApiStack {
  return openedBeforeAll(() => startFilesApiStack(name));
}

/**
 * A gateway of a describe block (startFilesGateway with `env`), opened in its beforeAll and closed in
 * its afterAll; its fields are set once beforeAll has run.
 */
export function useFilesGateway(env: Record<string, string>): TestGateway {
  return openedBeforeAll(() => startFilesGateway(env));
}

/** Expects the problem `type` with `status`, and returns it. */
export function expectProblem(gateway: TestGateway, response: { status: number; body: unknown }, status: number, type: string): Problem {
  const problem = response.body as Problem;
  expect({ status: response.status, type: problem.type }).toEqual({ status, type: gateway.problemType(type) });
  return problem;
}
