import { startTestGateway, type TestGateway } from '../../helpers/app';
import { bearer, get, post, registerAccount, uniqueEmail, type RegisteredAccount } from '../../helpers/identity';

/**
 * The gateway's own answers (api/middleware/security-headers.ts, docs/security.md): every answer
 * carries X-Content-Type-Options: nosniff, and every answer holding a tenant's data or a token is
 * Cache-Control: no-store, problems and the fallback's answers included. A public answer that is the
 * same for everyone keeps the caching its route sets.
 */
let gateway: TestGateway;
let account: RegisteredAccount;

beforeAll(async () => {
  gateway = await startTestGateway();
  account = await registerAccount(gateway);
});

afterAll(async () => {
  await gateway?.close();
});

const headersOf = (response: { status: number; headers: Headers }) => ({
  status: response.status,
  nosniff: response.headers.get('x-content-type-options'),
  cache: response.headers.get('cache-control'),
});

describe('the security headers', () => {
  it('mark authenticated answers nosniff and no-store, on both prefixes', async () => {
    expect(headersOf(await get(gateway, '/auth/me', account.accessToken))).toEqual({ status: 200, nosniff: 'nosniff', cache: 'no-store' });
    const alias = await fetch(`${gateway.baseUrl}/api/v1/auth/me`, { headers: bearer(account.accessToken) });
    expect(headersOf(alias)).toEqual({ status: 200, nosniff: 'nosniff', cache: 'no-store' });
  });

  it('mark the answers that carry tokens no-store: register, login and refresh', async () => {
    const registered = await post(gateway, '/auth/register', { email: uniqueEmail('headers'), password: account.password, firstName: 'A', lastName: 'B' });
    expect(headersOf(registered)).toEqual({ status: 201, nosniff: 'nosniff', cache: 'no-store' });
    const login = await post<{ refreshToken: string }>(gateway, '/auth/login', { email: account.user.email, password: account.password });
    expect(headersOf(login)).toEqual({ status: 200, nosniff: 'nosniff', cache: 'no-store' });
    const refreshed = await post(gateway, '/auth/refresh', { refreshToken: login.body.refreshToken });
    expect(headersOf(refreshed)).toEqual({ status: 200, nosniff: 'nosniff', cache: 'no-store' });
  });

  it('mark problems and the fallback\'s answers too', async () => {
    expect(headersOf(await get(gateway, '/auth/me'))).toEqual({ status: 401, nosniff: 'nosniff', cache: 'no-store' });
    expect(headersOf(await get(gateway, '/no-such-route', account.accessToken))).toEqual({ status: 404, nosniff: 'nosniff', cache: 'no-store' });
    const wrongMethod = await fetch(`${gateway.baseUrl}/v1/auth/me`, { method: 'DELETE', headers: bearer(account.accessToken) });
    expect(headersOf(wrongMethod)).toEqual({ status: 405, nosniff: 'nosniff', cache: 'no-store' });
  });

  it('leave the caching of public answers the same for everyone to their routes, still nosniff', async () => {
    expect(headersOf(await fetch(`${gateway.baseUrl}/.well-known/jwks.json`)))
      .toEqual({ status: 200, nosniff: 'nosniff', cache: 'public, max-age=300' });
    const asset = await fetch(`${gateway.baseUrl}/api-docs/assets/redoc.standalone.js`);
    await asset.arrayBuffer();
    expect(headersOf(asset)).toEqual({ status: 200, nosniff: 'nosniff', cache: 'public, max-age=86400' });
  });
});
