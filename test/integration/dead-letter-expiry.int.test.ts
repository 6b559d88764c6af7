import { config } from '../../common/config';
import { newId } from '../../common/ids';
import { createLogger } from '../../common/logger';
import { createDbPool, type DatabasePool } from '../../db/pool';
import { expireStaleRecords } from '../../services/maintenance/expiry';
import { migrateSharedDatabase } from '../helpers/db';
import { deadLetterState, seedDeadLetter } from '../helpers/dead-letters';

/**
 * The maintenance sweep's dead-letter step (services/maintenance/expiry.ts, the status
 * expired of docs/reference/events.md#rule-19): across tenants, on the owner's pool, open dead letters past their retention become
 * expired and are kept; resolved ones and those within their retention are left as they are.
 */
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  owner = await createDbPool(config().db.ownerUrl, { name: 'test-dead-letter-expiry', maxPoolSize: 2 });
});

afterAll(async () => {
  await owner?.end();
});

it('expires pending and retrying dead letters past expires_at in batches, and leaves the rest', async () => {
  const [one, two] = [newId(), newId()];
  const due = [
    await seedDeadLetter(owner, one, { expiresInHours: -1 }),
    await seedDeadLetter(owner, one, { expiresInHours: -2, status: 'retrying' }),
    await seedDeadLetter(owner, two, { expiresInHours: -1, quarantined: true }),
  ];
  const kept = [
    await seedDeadLetter(owner, one, { expiresInHours: -1, status: 'resolved' }),
    await seedDeadLetter(owner, two, { expiresInHours: 1 }),
  ];

  // Batches of two: three rows due (and any other test's) take at least two statements.
  const counts = await expireStaleRecords({ fleetPool: owner, logger: createLogger('test', 'silent') }, 2, () => undefined);

  expect(counts.deadLetters).toBeGreaterThanOrEqual(3);
  for (const row of due) expect((await deadLetterState(owner, row.id)).status).toBe('expired');
  expect((await deadLetterState(owner, kept[0].id)).status).toBe('resolved');
  expect((await deadLetterState(owner, kept[1].id)).status).toBe('pending');
});
