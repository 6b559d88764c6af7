import { crmTenant, startDataApiStack, type DataApiStack } from '../../helpers/data-api';
import { get, registerAccount } from '../../helpers/identity';
import { configureModule, installModule } from '../../helpers/modules';
import { addMember } from '../../helpers/rbac';

/**
 * The model description `GET /data/{module}/models` (docs/reference/data.md, Resources; issue 16)
 * through the real gateway: the autoApi models of the shipped crm manifest, for any member of a
 * tenant that has the module installed and active, and 404 module-not-found for any other.
 */

let stack: DataApiStack;

beforeAll(async () => {
  stack = await startDataApiStack('data-models-test');
});

afterAll(async () => {
  await stack?.close();
});

const SYSTEM_FIELDS = [
  { name: 'id', type: 'uuid', nullable: false, primaryKey: true },
  { name: 'tenantId', type: 'uuid', nullable: false },
  { name: 'createdAt', type: 'timestamptz', nullable: false },
  { name: 'updatedAt', type: 'timestamptz', nullable: false },
  { name: 'deletedAt', type: 'timestamptz', nullable: true },
];

const CRM_MODELS = {
  data: [
    { name: 'companies', fields: [...SYSTEM_FIELDS, { name: 'name', type: 'text', nullable: false }, { name: 'country', type: 'text', nullable: true }] },
    {
      name: 'contacts',
      fields: [
        ...SYSTEM_FIELDS,
        { name: 'firstName', type: 'text', nullable: false },
        { name: 'lastName', type: 'text', nullable: true },
        { name: 'email', type: 'text', nullable: true },
        { name: 'age', type: 'integer', nullable: true },
        { name: 'companyId', type: 'uuid', nullable: true, foreignKey: 'companies.id' },
        { name: 'tags', type: 'jsonb', nullable: true },
      ],
    },
  ],
};

const models = (token?: string, module = 'crm') => get(stack.gateway, `/data/${module}/models`, token);

function expectModuleNotFound(answer: { status: number; body: Record<string, unknown> }): void {
  expect({ status: answer.status, type: answer.body.type }).toEqual({ status: 404, type: stack.gateway.problemType('module-not-found') });
}

describe('GET /data/{module}/models', () => {
  it('answers 401 without a token', async () => {
    const answer = await models();
    expect(answer.status).toBe(401);
    expect(answer.body.type).toBe(stack.gateway.problemType('unauthorized'));
  });

  it('answers 404 module-not-found for a module the tenant has not installed, or that does not exist', async () => {
    const { accessToken } = await registerAccount(stack.gateway);
    expectModuleNotFound(await models(accessToken));
    expectModuleNotFound(await models(accessToken, 'nosuchmodule'));
    expectModuleNotFound(await models(accessToken, 'NOT-a-slug'));
  });

  it('describes the crm models once installed, to every member: no permission beyond membership', async () => {
    const { token, tenantId } = await crmTenant(stack);

    const described = await models(token);
    expect(described.status).toBe(200);
    expect(described.body).toEqual(CRM_MODELS);

    // The member role holds no permission at all (services/access/permissions.ts).
    const member = await addMember(stack.gateway, stack.owner, tenantId, 'member');
    const asMember = await models(member.token);
    expect({ status: asMember.status, body: asMember.body }).toEqual({ status: 200, body: CRM_MODELS });
  });

  it('shows another tenant the same catalogue, only while the module is installed and active there', async () => {
    const first = await crmTenant(stack);
    const second = await registerAccount(stack.gateway);
    expectModuleNotFound(await models(second.accessToken));

    expect((await installModule(stack.gateway, second.accessToken, 'crm')).status).toBe(201);
    expect((await models(second.accessToken)).body).toEqual(CRM_MODELS);

    expect((await configureModule(stack.gateway, second.accessToken, 'crm', { status: 'inactive' })).status).toBe(200);
    expectModuleNotFound(await models(second.accessToken));
    expect((await models(first.token)).body).toEqual(CRM_MODELS);
  });
});
