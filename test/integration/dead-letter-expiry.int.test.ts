import { newId } from '../../common/ids';
import { createLogger } from '../../common/logger';
import { expireStaleRecords } from '../../services/maintenance/expiry';
import { createMigratedDatabase, type MigratedDatabase } from '../helpers/db';
import { deadLetterState, seedDeadLetter } from '../helpers/dead-letters';

/**
 * The maintenance sweep's dead-letter step (services/maintenance/expiry.ts, the status
 * expired of docs/reference/events.md#rule-19): across tenants, on the owner's pool, open dead letters past their retention become
 * expired and are kept; resolved ones and those within their retention are left as they are.
 * The sweep runs on a scratch database: on the shared one it would expire or delete other files'
 * rows, and another sweeper could take this file's rows first, so its counts could not be exact.
 */
let db: MigratedDatabase;

beforeAll(async () => {
  db = await createMigratedDatabase('dead_letter_expiry');
});

afterAll(async () => {
  await db?.close();
});

it('expires pending and retrying dead letters past expires_at in batches, and leaves the rest', async () => {
  const { owner } = db;
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

  // Batches of two: the three rows due take two statements.
  const counts = await expireStaleRecords({ fleetPool: owner, logger: createLogger('test', 'silent') }, 2, () => undefined);

  expect(counts).toEqual({ idempotencyKeys: 0, oneTimeTokens: 0, refreshTokenFamilies: 0, deadLetters: 3 });
  for (const row of due) expect((await deadLetterState(owner, row.id)).status).toBe('expired');
  expect((await deadLetterState(owner, kept[0].id)).status).toBe('resolved');
  expect((await deadLetterState(owner, kept[1].id)).status).toBe('pending');
});
