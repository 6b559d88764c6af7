import { brief, check, expectStatus } from '../expect';
import type { Http } from '../http';
import type { State } from '../state';
import type { Tour } from '../steps';

// The plans, the new tenant's subscription and its usage (the member of rbac counted when it exists).

export async function billing(tour: Tour, http: Http, state: State): Promise<void> {
  const owner = state.owner;
  await tour.area('billing', owner ? null : 'needs the owner session of identity', async (step) => {
    const { token } = owner!;
    await step('plans', async () => {
      const answer = await http.get<{ data: { id: string }[] }>('/v1/billing/plans', token);
      expectStatus(answer, 200);
      const ids = answer.body.data.map((plan) => plan.id);
      check(ids.includes('starter'), `expected the starter plan, got ${ids.join(', ')}`);
      return `200 ${ids.join(', ')}`;
    });
    await step('subscription', async () => {
      const answer = await http.get<{ tenantId: string; planId: string; status: string }>('/v1/billing/subscriptions', token);
      expectStatus(answer, 200);
      check(answer.body.tenantId === owner!.tenantId, `expected the subscription of ${owner!.tenantId}, got ${brief(answer)}`);
      check(['trialing', 'active'].includes(answer.body.status), `expected trialing or active, got ${answer.body.status}`);
      return `200 ${answer.body.planId} ${answer.body.status}`;
    });
    await step('usage', async () => {
      const answer = await http.get<{ planId: string; usage: Record<string, { current: number; limit: number }> }>('/v1/billing/usage', token);
      expectStatus(answer, 200);
      const users = answer.body.usage.users;
      const expected = state.member ? 2 : 1;
      check(users.current >= expected, `expected at least ${expected} users, got ${JSON.stringify(users)}`);
      return `200 users ${users.current}/${users.limit}`;
    });
  });
}
