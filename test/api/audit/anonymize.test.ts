import { awaitPendingAnonymizations, withAnonymizationLock } from '../../../services/audit/anonymization-lock';
import { bearer, get, post, registerAccount, type RegisteredAccount } from '../../helpers/identity';
import { memberToken, relayAuditOutbox, startAuditApiStack, untilStored, type AuditApiStack } from '../../helpers/audit-api';

/**
 * POST /audit/anonymize (docs/reference/audit.md, rules 13 to 15): the ANONYMIZE record goes through the
 * pipeline, and from then on every read endpoint shows the user's records masked; money.* records
 * refuse the whole request (403); a second request while one holds the user's lock is 409, and
 * readers of the tenant wait for the lock.
 */

jest.setTimeout(60_000);

interface Accepted { auditId: string; createdAt: string }
interface RecordBody { id: string; action: string; actorId: string | null; actorIp: string | null; actorUserAgent: string | null; [k: string]: unknown }
interface Page { data: RecordBody[]; next_page_token?: string }

let stack: AuditApiStack;
let admin: RegisteredAccount;
let tenantId: string;

beforeAll(async () => {
  stack = await startAuditApiStack('audit_anonymize');
  admin = await registerAccount(stack.gateway);
  tenantId = admin.tenant.id;
});

afterAll(async () => {
  await stack?.close();
});

async function write(token: string, records: object[], userAgent = 'jest'): Promise<string[]> {
  const response = await post(stack.gateway, '/audit/records/batch', { records }, { ...bearer(token), 'user-agent': userAgent });
  if (response.status !== 202) throw new Error(`batch answered ${response.status}`);
  const ids = (response.body.data as Accepted[]).map((a) => a.auditId);
  await untilStored(stack.owner, ids);
  return ids;
}

const anonymize = (userId: string, token = admin.accessToken) => post(stack.gateway, '/audit/anonymize', { userId }, bearer(token));

async function read<T = RecordBody>(path: string): Promise<T> {
  const response = await get<T>(stack.gateway, path, admin.accessToken);
  if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
  return response.body;
}

const profile = { email: 'grace@example.test', firstName: 'Grace' };
const MASKED_ACTOR = { actorId: 'anonymized', actorIp: null, actorUserAgent: null };

describe('anonymizing a user', () => {
  let user: { token: string; userId: string };
  let byUser: string[];
  let aboutUser: string[];
  let unrelated: string[];
  let result: Record<string, unknown>;

  beforeAll(async () => {
    user = await memberToken(stack, tenantId, 'member');
    byUser = await write(user.token, [
      { action: 'crm.contact.created', entityType: 'contact', entityId: 'c1', after: { name: 'Ada' } },
      { action: 'iam.user.updated', entityType: 'user', entityId: user.userId, before: profile, after: { ...profile, firstName: 'G.' } },
    ], 'grace-browser');
    aboutUser = await write(admin.accessToken, [
      { action: 'iam.user.invited', entityType: 'user', entityId: user.userId, after: profile, meta: { invitedEmail: profile.email } },
    ]);
    unrelated = await write(admin.accessToken, [{ action: 'crm.contact.updated', entityType: 'contact', entityId: 'c1', after: { name: 'Ada L.' } }]);
    const response = await anonymize(user.userId);
    expect(response.status).toBe(200);
    result = response.body;
  });

  it('answers 200 {userId, recordsAffected, completedAt} and appends the ANONYMIZE record through the pipeline', async () => {
    expect(result).toEqual({ userId: user.userId, recordsAffected: 3, completedAt: expect.any(String) });
    const [anonymizationId] = await relayAuditOutbox(stack, tenantId);
    await untilStored(stack.owner, [anonymizationId]);
    const record = await read(`/audit/records/${anonymizationId}`);
    expect(record).toMatchObject({
      action: 'audit.record.anonymized', entityType: 'user', entityId: user.userId, actorId: admin.user.id,
      meta: { recordsAffected: 3, maskedUntil: result.completedAt },
    });
  });

  it("masks the user's actor fields and the snapshots of records about the user on every read endpoint", async () => {
    const [contactByUser, selfUpdate] = byUser as [string, string];
    const [invite] = aboutUser as [string];
    const expected: Record<string, object> = {
      // The user acted on a contact: who and from where is masked, the contact's data is not.
      [contactByUser]: { ...MASKED_ACTOR, after: { name: 'Ada' } },
      // The user changed their own profile: both.
      [selfUpdate]: { ...MASKED_ACTOR, before: { anonymized: true }, after: { anonymized: true } },
      // The admin invited the user: the admin stays, the user's data is masked.
      [invite]: { actorId: admin.user.id, actorIp: '127.0.0.1', after: { anonymized: true }, meta: { anonymized: true } },
      [unrelated[0]]: { actorId: admin.user.id, after: { name: 'Ada L.' } },
    };
    const lists = await Promise.all([
      read<Page>('/audit/records?page_size=100'), read<Page>('/audit?limit=100'),
      read<Page>('/audit/entity/contact/c1'), read<Page>('/audit/entity-history?entityType=contact&entityId=c1'),
      read<Page>(`/audit/entity/user/${user.userId}`), read<Page>(`/audit/entity-history?entityType=user&entityId=${user.userId}`),
    ]);
    const seen = lists.flatMap((page) => page.data);
    for (const [id, fields] of Object.entries(expected)) {
      const copies = [...seen.filter((r) => r.id === id), await read(`/audit/records/${id}`), await read(`/audit/${id}`)];
      expect(copies.length).toBeGreaterThanOrEqual(4);
      for (const copy of copies) expect(copy).toMatchObject(fields);
    }
    const everything = JSON.stringify(seen);
    for (const secret of [profile.email, 'grace-browser']) expect(everything).not.toContain(secret);
    // Filtering by the former actor id finds nothing any more.
    expect((await read<Page>(`/audit/records?actorId=${user.userId}`)).data).toEqual([]);
  });

  it('leaves what the user does afterwards readable; a second anonymization masks only the new records', async () => {
    const [later] = await write(user.token, [{ action: 'crm.contact.viewed', entityType: 'contact', entityId: 'c2' }], 'grace-browser');
    expect(await read(`/audit/${later}`)).toMatchObject({ actorId: user.userId, actorUserAgent: 'grace-browser' });
    const again = await anonymize(user.userId);
    expect(again.status).toBe(200);
    expect(again.body.recordsAffected).toBe(1);
    expect(await read(`/audit/${later}`)).toMatchObject(MASKED_ACTOR);
  });
});

describe('refusals', () => {
  it('refuses a user with money.* records with 403 anonymize-financial-record and masks nothing', async () => {
    const payer = await memberToken(stack, tenantId, 'member');
    const [credit, other] = await write(payer.token, [
      { action: 'money.wallet.credited', entityType: 'wallet', entityId: 'w1', meta: { amount: 500 } },
      { action: 'crm.contact.created', entityType: 'contact', entityId: 'c9' },
    ]);
    const refused = await anonymize(payer.userId);
    expect(refused.status).toBe(403);
    expect(refused.body.type).toBe(stack.gateway.problemType('anonymize-financial-record'));
    for (const id of [credit, other]) expect(await read(`/audit/${id}`)).toMatchObject({ actorId: payer.userId, actorIp: '127.0.0.1' });
  });

  it('answers 409 anonymize-conflict while an anonymization of the same user holds its lock; readers wait for it', async () => {
    const target = await memberToken(stack, tenantId, 'member');
    let readerDone = false;
    let reader: Promise<number> | undefined;
    await withAnonymizationLock(stack.gateway.runtime.audit.db, tenantId, target.userId, 60, async () => {
      const conflict = await anonymize(target.userId);
      expect(conflict.status).toBe(409);
      expect(conflict.body.type).toBe(stack.gateway.problemType('anonymize-conflict'));
      const timing = { lockSeconds: 60, pollMs: 20, maxWaitMs: 100 };
      expect(await awaitPendingAnonymizations(stack.gateway.runtime.audit.analyticsDb, tenantId, timing)).toBe(false);
      reader = get(stack.gateway, '/audit/records', admin.accessToken).then((response) => {
        readerDone = true;
        return response.status;
      });
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(readerDone).toBe(false);
    });
    expect(await reader).toBe(200);
    expect(await awaitPendingAnonymizations(stack.gateway.runtime.audit.analyticsDb, tenantId)).toBe(true);
    expect((await anonymize(target.userId)).status).toBe(200);
  });

  it('needs audit.delete, and a UUID', async () => {
    const member = await memberToken(stack, tenantId, 'member');
    expect((await anonymize(member.userId, member.token)).status).toBe(403);
    expect((await anonymize('someone')).status).toBe(400);
  });
});
