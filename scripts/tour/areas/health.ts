import { brief, check, expectProblem, expectStatus } from '../expect';
import type { Http } from '../http';
import type { State } from '../state';
import type { Tour } from '../steps';

// The probes, and /health as nobody, a member and the owner.

export async function health(tour: Tour, http: Http, state: State): Promise<void> {
  await tour.area('health', null, async (step) => {
    await step('/live', async () => {
      const answer = await http.get('/live');
      expectStatus(answer, 200);
      return `200 ${String(answer.body.status)}`;
    });
    await step('/ready', async () => {
      const answer = await http.get('/ready');
      expectStatus(answer, 200);
      return `200 ${String(answer.body.status)}`;
    });
    await step('/health without a token', async () => {
      expectStatus(await http.get('/health'), 401);
      return '401';
    });
    if (state.member) {
      await step('/health as a member', async () => {
        expectProblem(await http.get('/health', state.member!.token), 403, 'forbidden');
        return '403 forbidden';
      });
    }
    if (state.owner) {
      await step('/health as the owner (admin)', async () => {
        const answer = await http.get<{ status: string; components: Record<string, { status: string }> }>('/health', state.owner!.token);
        expectStatus(answer, 200);
        const unhealthy = Object.entries(answer.body.components).filter(([, component]) => component.status !== 'healthy').map(([name]) => name);
        check(answer.body.status === 'healthy' && unhealthy.length === 0, `expected every component healthy, got ${brief(answer)}`);
        return `200 healthy, ${Object.keys(answer.body.components).length} components`;
      });
    }
  });
}
