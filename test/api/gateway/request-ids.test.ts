import { randomUUID } from 'node:crypto';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { get, registerAccount, type RegisteredAccount } from '../../helpers/identity';

/**
 * Ids in requests are read in the one spelling PostgreSQL's uuid type reads (api/http/ids.ts,
 * issue 15). A wrapped or otherwise spelled UUID is the guard's 400 validation-error naming its
 * field, not a 500 from the cast, nor the database safety net's 400 that names no field.
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

const V7 = '0192f0a4-1b2c-7d3e-8f40-123456789abc';
const misspelled = [`{${V7}}`, `[${V7}]`, `(${V7})`, V7.replaceAll('-', ':'), V7.replaceAll('-', '')];

describe('an id in a path', () => {
  it.each([
    ['identity', (id: string) => `/users/${id}`],
    ['money', (id: string) => `/transactions/${id}`],
  ])('%s: a braced or otherwise spelled UUID is 400 validation-error naming the field; any version in the one form is looked up', async (_domain, path) => {
    for (const id of misspelled) {
      const response = await get(gateway, path(encodeURIComponent(id)), account.accessToken);
      expect({ id, status: response.status, body: response.body }).toMatchObject({
        id, status: 400, body: { type: gateway.problemType('validation-error'), errors: [{ field: 'id', code: 'INVALID_FORMAT' }] },
      });
    }
    // Unknown ids of v7, v4 (the ids clients may hold) and upper case are read and not found, as before.
    for (const id of [V7, randomUUID(), V7.toUpperCase()]) {
      expect({ id, status: (await get(gateway, path(id), account.accessToken)).status }).toEqual({ id, status: 404 });
    }
  });
});

/** Every UUID a route reads from params, query, body or headers is one of api/http/ids.ts's. */
describe('request schemas', () => {
  function looseUuids(node: unknown, at: string, found: string[]): void {
    if (Array.isArray(node)) node.forEach((item, i) => looseUuids(item, `${at}[${i}]`, found));
    else if (node && typeof node === 'object') {
      const { rules } = node as { rules?: { name: string; args?: { options?: { separator?: unknown; wrapper?: unknown } } }[] };
      for (const rule of rules ?? []) {
        const options = rule.args?.options;
        if ((rule.name === 'guid' || rule.name === 'uuid') && (options?.separator !== '-' || options?.wrapper !== false)) found.push(at);
      }
      for (const [key, value] of Object.entries(node)) if (key !== 'rules') looseUuids(value, `${at}.${key}`, found);
    }
  }

  it('take no UUID in joi’s loose spellings', () => {
    const found: string[] = [];
    for (const route of gateway.routes) {
      for (const part of ['params', 'query', 'headers', 'body'] as const) {
        const schema = route.schemas[part];
        if (schema) looseUuids(schema.describe(), `${route.method} ${route.path} ${part}`, found);
      }
    }
    expect(found).toEqual([]);
  });
});
