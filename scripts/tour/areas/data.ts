import { brief, canonical, check, expectStatus } from '../expect';
import { answerOf, type Http } from '../http';
import { short, type State } from '../state';
import type { Tour } from '../steps';

// Records of crm written, queried (filter, select, order, count, embedding), updated and deleted.

type DataRecord = Record<string, unknown> & { id: string };

export async function data(tour: Tour, http: Http, state: State, crmInstalled: boolean): Promise<void> {
  const owner = state.owner;
  await tour.area('data', !owner ? 'needs the owner session of identity' : crmInstalled ? null : 'needs crm installed by modules', async (step) => {
    const { token } = owner!;
    const api = http.client(token);
    let companyId = '';
    const contacts: Partial<Record<'ada' | 'charles' | 'grace', string>> = {};
    await step('create a company with two contacts', async () => {
      const answer = await http.post<DataRecord & { contacts: DataRecord[] }>('/v1/data/crm/companies', {
        name: `Analytical Engines ${state.runId}`, country: 'GB',
        contacts: [{ firstName: 'Ada', lastName: 'Lovelace', age: 36 }, { firstName: 'Charles', lastName: 'Babbage', age: 79 }],
      }, token);
      expectStatus(answer, 201);
      companyId = answer.body.id;
      const byName = new Map(answer.body.contacts.map((contact) => [contact.firstName, contact]));
      check(byName.get('Ada')?.companyId === companyId && byName.has('Charles'), `expected Ada and Charles in the company, got ${brief(answer)}`);
      contacts.ada = byName.get('Ada')!.id;
      contacts.charles = byName.get('Charles')!.id;
      return `201 company ${short(companyId)} with 2 contacts`;
    });
    await step('create a contact', async () => {
      const answer = answerOf(await api.data.POST('/data/crm/contacts', {
        body: { firstName: 'Grace', lastName: 'Hopper', email: 'Grace.Hopper@Example.TEST', age: 85, companyId },
      }));
      expectStatus(answer, 201);
      // The crm module's beforeCreate hook stores one spelling of an address (modules/crm/hooks.ts).
      check(answer.body.email === 'grace.hopper@example.test', `expected the hook to lower-case the e-mail, got ${brief(answer)}`);
      const { id } = answer.body;
      check(id !== undefined, `expected the contact's id, got ${brief(answer)}`);
      contacts.grace = id;
      return `201 contact ${short(id)}, e-mail normalised`;
    });
    const query = (params: string) => http.get<{ data: DataRecord[]; count?: number }>(`/v1/data/crm/contacts?${params}`, token, { prefer: 'count=exact' });
    await step('query: filter, select, order, count', async () => {
      const answer = await query(`companyId=eq.${companyId}&age=gte.40&select=firstName,age&order=age.desc`);
      expectStatus(answer, 200);
      const expected = [{ firstName: 'Grace', age: 85 }, { firstName: 'Charles', age: 79 }];
      check(canonical(answer.body.data) === canonical(expected) && answer.body.count === 2,
        `expected Grace (85) then Charles (79), count 2, got ${brief(answer)}`);
      return '200 Grace 85, Charles 79 (count 2)';
    });
    await step('query: embed the company', async () => {
      const answer = await query(`id=eq.${contacts.ada}&select=firstName,companies(name)`);
      expectStatus(answer, 200);
      const [ada] = answer.body.data;
      check((ada?.companies as { name?: string } | undefined)?.name === `Analytical Engines ${state.runId}`, `expected Ada with her company, got ${brief(answer)}`);
      return '200 Ada with companies(name)';
    });
    await step('update a contact', async () => {
      const answer = answerOf(await api.data.PATCH('/data/crm/contacts/{id}', { params: { path: { id: contacts.ada! } }, body: { age: 37 } }));
      expectStatus(answer, 200);
      check(answer.body.age === 37 && answer.body.lastName === 'Lovelace', `expected age 37, the rest unchanged, got ${brief(answer)}`);
      return '200 age 37';
    });
    await step('delete a contact', async () => {
      expectStatus(answerOf(await api.data.DELETE('/data/crm/contacts/{id}', { params: { path: { id: contacts.charles! } } })), 204);
      return '204';
    });
    await step('the deleted contact is gone', async () => {
      const one = await http.get(`/v1/data/crm/contacts/${contacts.charles}`, token);
      expectStatus(one, 404);
      const list = await query(`companyId=eq.${companyId}&select=firstName&order=firstName.asc`);
      expectStatus(list, 200);
      check(canonical(list.body.data) === canonical([{ firstName: 'Ada' }, { firstName: 'Grace' }]), `expected Ada and Grace left, got ${brief(list)}`);
      return '404 by id; Ada and Grace left';
    });
    state.contacts = { ada: contacts.ada!, charles: contacts.charles!, grace: contacts.grace! };
  });
}
