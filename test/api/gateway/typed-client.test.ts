import { newId } from '../../../common/ids';
import { bearer, createPlatformClient, type PlatformClient } from '../../../sdk/rest/client';
import { startDataApiStack, type DataApiStack } from '../../helpers/data-api';
import { GOOD_PASSWORD, uniqueEmail } from '../../helpers/identity';
import { verifyEmail } from '../../helpers/money';

/**
 * The typed REST client (sdk/rest/client.ts) against the real gateway, as an integrator calls it: the
 * paths, parameters and bodies below are checked by the compiler against the types generated from
 * the OpenAPI documents, and the token is asked for per call.
 */
jest.setTimeout(60_000);

let stack: DataApiStack;
let session: { accessToken?: string } = {};
let api: PlatformClient;

beforeAll(async () => {
  stack = await startDataApiStack('typed-client');
  api = createPlatformClient({ baseUrl: stack.gateway.baseUrl, token: () => session.accessToken });
});

afterAll(() => stack?.close());

describe('the typed REST client', () => {
  const email = uniqueEmail('typed');

  it('registers, logs in and reads /auth/me with the token it is given per call', async () => {
    const registered = await api.iam.POST('/auth/register', { body: { email, password: GOOD_PASSWORD, tenantName: 'Typed' } });
    expect(registered.response.status).toBe(201);
    expect(registered.data?.accessToken).toEqual(expect.any(String));

    const login = await api.iam.POST('/auth/login', { body: { email, password: GOOD_PASSWORD } });
    expect(login.response.status).toBe(200);
    // A one-tenant account gets its tokens at once; the answer's other shape is the tenant choice.
    session = { accessToken: login.data && 'accessToken' in login.data ? login.data.accessToken : undefined };

    const me = await api.iam.GET('/auth/me');
    expect(me.response.status).toBe(200);
    expect(me.data).toMatchObject({ email: email.toLowerCase(), roles: ['owner'] });
  });

  it('answers an error as the documents\' problem, and a call may send its own token', async () => {
    const anonymous = createPlatformClient({ baseUrl: stack.gateway.baseUrl });
    const refused = await anonymous.iam.GET('/auth/me');
    expect(refused.response.status).toBe(401);
    expect(refused.error).toMatchObject({ type: stack.gateway.problemType('unauthorized'), status: 401 });

    const own = await anonymous.iam.GET('/auth/me', { headers: bearer(session.accessToken!) });
    expect(own.response.status).toBe(200);
  });

  it('creates and lists records of a module\'s model', async () => {
    expect((await api.iam.POST('/modules/{slug}/install', { params: { path: { slug: 'crm' } } })).response.status).toBe(201);
    const created = await api.data.POST('/data/crm/contacts', { body: { firstName: 'Ada', lastName: 'Lovelace', email: uniqueEmail('ada') } });
    expect(created.response.status).toBe(201);

    const list = await api.data.GET('/data/crm/contacts', { params: { query: { firstName: 'eq.Ada' } } });
    expect(list.response.status).toBe(200);
    expect(list.data?.data.map((contact) => contact.id)).toEqual([created.data?.id]);
  });

  it('opens a wallet, credits it under an idempotency key and reads its balance', async () => {
    const me = await api.iam.GET('/auth/me');
    // Money needs a verified address, as redeeming the mailed link makes it.
    await verifyEmail(stack.owner, me.data!.id);
    const wallet = await api.money.POST('/wallets', { body: { userId: me.data!.id, currency: 'EUR' } });
    expect(wallet.response.status).toBe(201);
    const walletId = wallet.data!.id;

    const credit = await api.money.POST('/wallets/{id}/credit', {
      params: { path: { id: walletId }, header: { 'Idempotency-Key': newId() } }, body: { amount: 1250, reason: 'top-up' },
    });
    expect(credit.response.status).toBe(200);
    const balance = await api.money.GET('/wallets/{id}/balance', { params: { path: { id: walletId } } });
    expect(balance.data).toMatchObject({ available: 1250, pending: 0, frozen: 0 });
  });
});
