import { brief, canonical, check, expectProblem, expectStatus, problemOf } from '../expect';
import type { Http } from '../http';
import type { Mailpit } from '../mailpit';
import { PASSWORD, short, uniqueEmail, type State } from '../state';
import type { Tour } from '../steps';
import type { Registered } from './identity';

// A role, a member invited by e-mail who gains a permission through it, and another tenant that sees neither.

export async function rbac(tour: Tour, http: Http, mail: Mailpit, state: State): Promise<void> {
  const owner = state.owner;
  await tour.area('rbac', owner ? null : 'needs the owner session of identity', async (step) => {
    const { token } = owner!;
    const roleName = `tour-greeter-${state.runId}`;
    let roleId = '';
    await step('create a role with settings.read', async () => {
      const answer = await http.post<{ id: string; permission_ids: string[] }>('/v1/roles', { name: roleName, description: 'May read settings (the tour)', permission_ids: ['settings.read'] }, token);
      expectStatus(answer, 201);
      check(canonical(answer.body.permission_ids) === canonical(['settings.read']), `expected permission_ids [settings.read], got ${brief(answer)}`);
      roleId = answer.body.id;
      return `201 role ${roleName}`;
    });
    const email = uniqueEmail(state, 'member');
    await step('invite a second user', async () => {
      const answer = await http.post<{ invite_id: string }>('/v1/auth/invite', { email }, token);
      expectStatus(answer, 202);
      check(typeof answer.body?.invite_id === 'string', `expected an invite_id, got ${brief(answer)}`);
      return `202 invite ${short(answer.body.invite_id)}`;
    });
    let inviteToken = '';
    await step('invitation e-mail in Mailpit', async () => {
      const found = await mail.linkToken(email, 'You are invited to');
      inviteToken = found.token;
      return `"${found.subject}"`;
    });
    let member: State['member'];
    await step('accept the invitation', async () => {
      const answer = await http.post<{ access_token: string; user: { id: string; roles: string[]; tenant_id: string } }>(
        '/v1/auth/accept-invite', { token: inviteToken, name: 'Tour Member', password: PASSWORD });
      expectStatus(answer, 201);
      const { user } = answer.body;
      check(user.tenant_id === owner!.tenantId && user.roles.includes('member'), `expected a member of ${owner!.tenantId}, got ${brief(answer)}`);
      member = { userId: user.id, token: answer.body.access_token, roleId };
      state.member = member;
      return `201 member ${short(user.id)}`;
    });
    await step('member may not GET /gateway/hello/secure', async () => {
      expectProblem(await http.get('/v1/gateway/hello/secure', member!.token), 403, 'forbidden');
      return '403 forbidden';
    });
    await step('assign the role to the member', async () => {
      const answer = await http.post<{ roles: string[] }>(`/v1/users/${member!.userId}/roles`, { role_id: roleId }, token);
      expectStatus(answer, 200);
      check(answer.body.roles.includes(roleName), `expected the roles to include ${roleName}, got ${brief(answer)}`);
      return `200 roles ${answer.body.roles.join(', ')}`;
    });
    await step('member may GET /gateway/hello/secure', async () => {
      // The assignment takes effect on the member's next request, with the same token.
      const answer = await http.get<{ message: string }>('/v1/gateway/hello/secure', member!.token);
      expectStatus(answer, 200);
      return `200 "${answer.body.message}"`;
    });
    let other = '';
    await step('register another tenant', async () => {
      const answer = await http.post<Registered>('/v1/auth/register', { email: uniqueEmail(state, 'other'), password: PASSWORD, tenantName: `Tour other ${state.runId}` });
      expectStatus(answer, 201);
      other = answer.body.accessToken;
      return `201 tenant ${short(answer.body.tenant.id)}`;
    });
    await step("another tenant's role is 404", async () => {
      const answer = await http.get(`/v1/roles/${roleId}`, other);
      expectStatus(answer, 404);
      return `404 ${problemOf(answer) ?? ''}`.trim();
    });
    await step("another tenant's user is 404", async () => {
      const answer = await http.get(`/v1/users/${member!.userId}`, other);
      expectStatus(answer, 404);
      return `404 ${problemOf(answer) ?? ''}`.trim();
    });
  });
}
