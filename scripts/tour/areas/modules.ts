import { brief, check, expectStatus } from '../expect';
import type { Http } from '../http';
import type { State } from '../state';
import type { Tour } from '../steps';

// crm installed from the catalogue; whether it was is what data and events need.

export async function modules(tour: Tour, http: Http, state: State): Promise<boolean> {
  const owner = state.owner;
  return tour.area('modules', owner ? null : 'needs the owner session of identity', async (step) => {
    const { token } = owner!;
    interface ModuleView { slug: string; installed: boolean; status: string | null; models: string[] }
    await step('catalogue lists crm', async () => {
      const answer = await http.get<{ data: ModuleView[] }>('/v1/modules', token);
      expectStatus(answer, 200);
      const crm = answer.body.data.find((module) => module.slug === 'crm');
      check(crm !== undefined && !crm.installed, `expected crm, not installed yet, got ${brief(answer)}`);
      return `200 ${answer.body.data.map((module) => module.slug).join(', ')}`;
    });
    await step('install crm', async () => {
      const answer = await http.send<ModuleView>('POST', '/v1/modules/crm/install', { token });
      expectStatus(answer, 201);
      check(answer.body.installed && answer.body.status === 'active', `expected crm installed and active, got ${brief(answer)}`);
      return `201 models ${answer.body.models.join(', ')}`;
    });
    await step('crm models', async () => {
      const answer = await http.get<{ data: { name: string }[] }>('/v1/data/crm/models', token);
      expectStatus(answer, 200);
      const names = answer.body.data.map((model) => model.name);
      check(names.includes('companies') && names.includes('contacts'), `expected companies and contacts, got ${names.join(', ')}`);
      return `200 ${names.join(', ')}`;
    });
  });
}
