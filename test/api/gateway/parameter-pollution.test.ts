import { startTestGateway, type TestGateway } from '../../helpers/app';
import { get, registerAccount, type RegisteredAccount } from '../../helpers/identity';

/**
 * docs/security.md, V5.1.1: a query parameter sent twice is not silently resolved to one of its
 * values (HTTP parameter pollution): the guard's scalar schema refuses the array with 400.
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

describe('a repeated query parameter', () => {
  it('is 400 validation-error naming it, where once it is read', async () => {
    expect((await get(gateway, '/users?page_size=5', account.accessToken)).status).toBe(200);
    const repeated = await get(gateway, '/users?page_size=5&page_size=100', account.accessToken);
    expect(repeated).toMatchObject({
      status: 400, body: { type: gateway.problemType('validation-error'), errors: [expect.objectContaining({ field: 'page_size' })] },
    });
  });
});
