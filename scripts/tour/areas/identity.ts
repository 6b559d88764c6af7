import { brief, check, expectProblem, expectStatus } from '../expect';
import type { Http } from '../http';
import type { Mailpit } from '../mailpit';
import { PASSWORD, short, uniqueEmail, type State } from '../state';
import type { Tour } from '../steps';

// A tenant registered, its owner's e-mail verified through Mailpit, then the session: login, refresh, /auth/me.

interface Session {
  accessToken: string;
  refreshToken: string;
  expiresAt: string;
}

export interface Registered extends Session {
  user: { id: string; tenantId: string; roles: string[]; emailVerified: boolean };
  tenant: { id: string; name: string };
  recoveryCodes: string[];
}

interface Me {
  id: string;
  tenantId: string;
  roles: string[];
  permissions: string[];
  emailVerified: boolean;
}

export async function identity(tour: Tour, http: Http, mail: Mailpit, state: State): Promise<void> {
  await tour.area('identity', null, async (step) => {
    const email = uniqueEmail(state, 'owner');
    let registered: Registered | undefined;
    let session: Session | undefined;
    await step('register a new tenant', async () => {
      const answer = await http.post<Registered>('/v1/auth/register', { email, password: PASSWORD, firstName: 'Tour', lastName: 'Guide', tenantName: `Tour ${state.runId}` });
      expectStatus(answer, 201);
      registered = answer.body;
      check(registered.user.roles.includes('owner'), `expected the owner role, got ${JSON.stringify(registered.user.roles)}`);
      check(registered.recoveryCodes.length === 10, `expected 10 recovery codes, got ${registered.recoveryCodes.length}`);
      check(!registered.user.emailVerified, 'a new account is not verified yet');
      return `201 tenant ${short(registered.tenant.id)}, owner ${short(registered.user.id)}`;
    });
    const { user } = registered!;
    let token = '';
    await step('verification e-mail in Mailpit', async () => {
      const found = await mail.linkToken(email, 'Confirm your e-mail address');
      token = found.token;
      return `"${found.subject}"`;
    });
    await step('verify the e-mail', async () => {
      const answer = await http.post('/v1/auth/verify-email', { token });
      expectStatus(answer, 200);
      check(answer.body.email_verified === true, `expected email_verified true, got ${brief(answer)}`);
      return '200 email_verified';
    });
    await step('login', async () => {
      const answer = await http.post<Session & { requiresTenantSelection?: boolean }>('/v1/auth/login', { email, password: PASSWORD });
      expectStatus(answer, 200);
      check(typeof answer.body.accessToken === 'string' && !answer.body.requiresTenantSelection, `expected a token pair, got ${brief(answer)}`);
      session = answer.body;
      return '200 token pair';
    });
    await step('refresh', async () => {
      const answer = await http.post<Session>('/v1/auth/refresh', { refreshToken: session!.refreshToken });
      expectStatus(answer, 200);
      check(answer.body.refreshToken !== session!.refreshToken, 'expected the refresh token to rotate');
      session = answer.body;
      return `200 rotated, expires ${answer.body.expiresAt}`;
    });
    await step('/auth/me', async () => {
      const answer = await http.get<Me>('/v1/auth/me', session!.accessToken);
      expectStatus(answer, 200);
      const me = answer.body;
      check(me.id === user.id && me.tenantId === registered!.tenant.id, `expected user ${user.id} of tenant ${registered!.tenant.id}, got ${brief(answer)}`);
      check(me.emailVerified && me.roles.includes('owner') && me.permissions.includes('*'), `expected a verified owner with *, got ${brief(answer)}`);
      state.owner = { email, userId: user.id, tenantId: registered!.tenant.id, token: session!.accessToken };
      return '200 verified owner, permissions *';
    });
    await step('/auth/me without a token', async () => {
      expectProblem(await http.get('/v1/auth/me'), 401, 'unauthorized');
      return '401 unauthorized';
    });
  });
}
