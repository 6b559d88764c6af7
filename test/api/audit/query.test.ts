import { get, bearer, post, registerAccount, type RegisteredAccount } from '../../helpers/identity';
import { memberToken, startAuditApiStack, untilStored, type AuditApiStack } from '../../helpers/audit-api';

/**
 * GET /audit/records and GET /audit (docs/reference/audit.md, rules 10 to 12): filters, both page envelopes, one record, entity
 * history on both route sets, tenant isolation and the audit.read permission.
 */

jest.setTimeout(60_000);

interface Accepted { auditId: string; createdAt: string }
interface RecordBody { id: string; action: string; entityType: string; entityId: string; actorId: string; timestamp: string; [k: string]: unknown }
interface Page { data: RecordBody[]; next_page_token?: string; meta?: { cursor: string | null; hasMore: boolean } }

let stack: AuditApiStack;
let account: RegisteredAccount;
let other: RegisteredAccount;
let otherRecordId: string;
let member: { token: string; userId: string };
/** Written in three batches, each later than the one before. */
let batches: Accepted[][];

async function write(token: string, records: object[]): Promise<Accepted[]> {
  const response = await post(stack.gateway, '/audit/batch', { records }, bearer(token));
  if (response.status !== 202) throw new Error(`batch answered ${response.status}`);
  const accepted = response.body.data as Accepted[];
  await untilStored(stack.owner, accepted.map((a) => a.auditId));
  // The next batch must carry a later timestamp (milliseconds).
  await new Promise((resolve) => setTimeout(resolve, 5));
  return accepted;
}

beforeAll(async () => {
  stack = await startAuditApiStack('audit_query');
  [account, other] = await Promise.all([registerAccount(stack.gateway), registerAccount(stack.gateway)]);
  member = await memberToken(stack, account.tenant.id, 'member');
  batches = [
    await write(account.accessToken, [
      { action: 'crm.contact.created', entityType: 'contact', entityId: 'c1', after: { name: 'Ada' } },
      { action: 'money.wallet.credited', entityType: 'wallet', entityId: 'w1', meta: { amount: 100 } },
      { action: 'crm.company.created', entityType: 'company', entityId: 'k1' },
    ]),
    await write(member.token, [{ action: 'crm.contact.updated', entityType: 'contact', entityId: 'c1', before: { name: 'Ada' }, after: { name: 'Ada L.' } }]),
    await write(account.accessToken, [{ action: 'crm.contact.deleted', entityType: 'contact', entityId: 'c1', before: { name: 'Ada L.' } }]),
  ];
  [{ auditId: otherRecordId }] = await write(other.accessToken, [{ action: 'crm.contact.created', entityType: 'contact', entityId: 'c1' }]);
});

afterAll(async () => {
  await stack?.close();
});

const ids = (page: Page) => page.data.map((r) => r.id);
const [c1Created, wallet, company] = [0, 1, 2].map((n) => () => batches[0][n].auditId);
const c1Updated = () => batches[1][0].auditId;
const c1Deleted = () => batches[2][0].auditId;

async function list(path: string, token = account.accessToken): Promise<Page> {
  const response = await get<Page>(stack.gateway, path, token);
  if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body;
}

describe.each([['/audit/records'], ['/audit']])('GET %s', (base) => {
  it("lists the tenant's records newest first, in the documented shape", async () => {
    const page = await list(base);
    expect(ids(page)).toEqual([c1Deleted(), c1Updated(), company(), wallet(), c1Created()].sort((a, b) => {
      const at = (id: string) => batches.flat().find((x) => x.auditId === id)!.createdAt;
      return at(b).localeCompare(at(a)) || b.localeCompare(a);
    }));
    expect(page.next_page_token).toBeUndefined();
    expect(page.data.find((r) => r.id === c1Updated())).toEqual({
      id: c1Updated(), action: 'crm.contact.updated', entityType: 'contact', entityId: 'c1',
      before: { name: 'Ada' }, after: { name: 'Ada L.' }, meta: null,
      actorId: member.userId, actorIp: '127.0.0.1', actorUserAgent: expect.any(String), tenantId: account.tenant.id,
      timestamp: batches[1][0].createdAt, traceId: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    // before is omitted on creation, after on deletion.
    expect(page.data.find((r) => r.id === c1Created())).not.toHaveProperty('before');
    expect(page.data.find((r) => r.id === c1Deleted())).not.toHaveProperty('after');
  });

  it.each([
    ['action=crm.contact.updated', () => [c1Updated()]],
    ['action=crm.contact.*', () => [c1Deleted(), c1Updated(), c1Created()]],
    ['action=crm.*&entityType=company', () => [company()]],
    ['action=crm.contact', () => []],
    ['action=*&entityId=c1', () => [c1Deleted(), c1Updated(), c1Created()]],
    ['action=money.*', () => [wallet()]],
    ['entityType=contact&entityId=c1', () => [c1Deleted(), c1Updated(), c1Created()]],
    ['entityId=w1', () => [wallet()]],
  ])('filters by %s', async (query, expected) => {
    expect(ids(await list(`${base}?${query}`))).toEqual(expected());
  });

  it('filters by actorId, since (inclusive) and until (exclusive)', async () => {
    expect(ids(await list(`${base}?actorId=${member.userId}`))).toEqual([c1Updated()]);
    const second = encodeURIComponent(batches[1][0].createdAt);
    expect(ids(await list(`${base}?since=${second}`))).toEqual([c1Deleted(), c1Updated()]);
    expect(new Set(ids(await list(`${base}?until=${second}`)))).toEqual(new Set([c1Created(), wallet(), company()]));
    expect(ids(await list(`${base}?since=${second}&until=${encodeURIComponent(batches[2][0].createdAt)}`))).toEqual([c1Updated()]);
  });

  it('pages with page_size/page_token and with limit/cursor over the same order', async () => {
    const all = ids(await list(base));
    const seen: string[] = [];
    let path = `${base}?page_size=2`;
    for (;;) {
      const page = await list(path);
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...ids(page));
      if (!page.next_page_token) break;
      path = `${base}?page_size=2&page_token=${page.next_page_token}`;
    }
    expect(seen).toEqual(all);

    const byCursor: string[] = [];
    let cursorPath = `${base}?limit=2`;
    for (;;) {
      const page = await list(cursorPath);
      byCursor.push(...ids(page));
      expect(page.meta).toEqual({ cursor: page.meta!.hasMore ? expect.any(String) : null, hasMore: expect.any(Boolean) });
      if (!page.meta!.hasMore) break;
      cursorPath = `${base}?limit=2&cursor=${page.meta!.cursor}`;
    }
    expect(byCursor).toEqual(all);
  });

  it.each([
    ['page_size=101'], ['limit=0'], ['page_size=2&cursor=abc'], ['page_token=bm90LWEtdG9rZW4'], ['since=yesterday'], ['action=a*b'],
  ])('refuses %s with 400 validation-error', async (query) => {
    const response = await get(stack.gateway, `${base}?${query}`, account.accessToken);
    expect(response.status).toBe(400);
    expect(response.body.type).toBe(stack.gateway.problemType('validation-error'));
  });

  it('answers one record, and 404 audit-record-not-found for an unknown id or another tenant\'s', async () => {
    const one = await get(stack.gateway, `${base}/${c1Updated()}`, account.accessToken);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: c1Updated(), action: 'crm.contact.updated', actorId: member.userId });
    for (const id of [otherRecordId, '01890a5d-ac96-774b-bcce-b302099a8057', 'not-a-uuid']) {
      const missing = await get(stack.gateway, `${base}/${id}`, account.accessToken);
      expect(missing.status).toBe(404);
      expect(missing.body.type).toBe(stack.gateway.problemType('audit-record-not-found'));
    }
    expect((await get(stack.gateway, `${base}/${otherRecordId}`, other.accessToken)).status).toBe(200);
  });

  it('needs audit.read: a member is refused with 403, an admin is let through', async () => {
    const denied = await get(stack.gateway, base, member.token);
    expect(denied.status).toBe(403);
    expect((await get(stack.gateway, `${base}/${c1Updated()}`, member.token)).status).toBe(403);
    const admin = await memberToken(stack, account.tenant.id, 'admin');
    expect((await get(stack.gateway, base, admin.token)).status).toBe(200);
  });
});

describe('entity history', () => {
  it('GET /audit/entity/:type/:id answers the entity\'s records newest first with {data, meta}', async () => {
    const page = await list('/audit/entity/contact/c1');
    expect(ids(page)).toEqual([c1Deleted(), c1Updated(), c1Created()]);
    expect(page.meta).toEqual({ cursor: null, hasMore: false });
    const first = await list('/audit/entity/contact/c1?limit=2');
    expect(ids(first)).toEqual([c1Deleted(), c1Updated()]);
    expect(ids(await list(`/audit/entity/contact/c1?limit=2&cursor=${first.meta!.cursor}`))).toEqual([c1Created()]);
    const since = encodeURIComponent(batches[1][0].createdAt);
    expect(ids(await list(`/audit/entity/contact/c1?since=${since}`))).toEqual([c1Deleted(), c1Updated()]);
  });

  it('GET /audit/entity-history?entityType&entityId answers the same with {data, next_page_token}', async () => {
    const first = await list('/audit/entity-history?entityType=contact&entityId=c1&page_size=2');
    expect(ids(first)).toEqual([c1Deleted(), c1Updated()]);
    const rest = await list(`/audit/entity-history?entityType=contact&entityId=c1&page_size=2&page_token=${first.next_page_token}`);
    expect(ids(rest)).toEqual([c1Created()]);
    expect(rest.next_page_token).toBeUndefined();
    const missing = await get(stack.gateway, '/audit/entity-history?entityType=contact', account.accessToken);
    expect(missing.status).toBe(400);
  });

  it("shows only the caller's tenant: the other tenant's contact c1 is its own history", async () => {
    expect(ids(await list('/audit/entity/contact/c1', other.accessToken))).toEqual([otherRecordId]);
  });
});
