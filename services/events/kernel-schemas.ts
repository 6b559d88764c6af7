import { DEFAULT_SCHEMA_VERSION } from './event-rules';
import { ANY_OBJECT_SCHEMA, type EventSchema, type JsonValue } from './schema-compat';

/**
 * The payload schemas of the kernel's event types (docs/reference/events.md, Events), registered by
 * the gateway at start-up under the owner `kernel`. Where a message's fields are fixed (`shown`) the
 * schema has them (snake_case, as the proto and the emitters write them); where none are the
 * type is "any JSON object", like a module type declared without a schema. Kernel payloads stay
 * open (additionalProperties): the emitters add fields beyond the fixed ones, and closing a schema
 * later would be a breaking change.
 */

export interface SchemaDeclaration {
  type: string;
  version: string;
  schema: EventSchema;
}

const string = { type: 'string' };
const uuid = { type: 'string', format: 'uuid' };
const nullableString = { type: ['string', 'null'] };
const timestamp = { type: 'string', format: 'date-time' };

function payload(properties: Record<string, JsonValue>, required: string[]): EventSchema {
  return { type: 'object', properties, required, additionalProperties: true };
}

const shown: Record<string, EventSchema> = {
  'auth.user.created': payload({
    user_id: uuid, email: string, display_name: string, role: { type: 'string', enum: ['member', 'admin', 'owner'] },
    tenant_id: uuid, created_at: timestamp,
  }, ['user_id', 'email', 'display_name', 'role', 'tenant_id', 'created_at']),
  // Only changed fields are populated (sparse).
  'auth.user.updated': payload({
    user_id: uuid, email: string, display_name: string, is_active: { type: 'boolean' }, updated_by: nullableString, updated_at: timestamp,
  }, ['user_id']),
  // A change of the role itself concerns no user, and an assignment has no previous role (services/access/role-changes.ts).
  'auth.role.changed': payload({
    user_id: nullableString, previous_role: nullableString, new_role: nullableString, changed_by: string, tenant_id: uuid,
  }, ['previous_role', 'new_role', 'changed_by', 'tenant_id']),
};

/** The kernel types of the catalogue (docs/reference/events.md, Events) whose fields are not fixed. */
const unshown = [
  'auth.user.deleted', 'auth.user.logged_in', 'auth.user.logged_out', 'auth.password.changed', 'auth.api_key.created', 'auth.api_key.revoked',
  // The holder's security notices (services/notify/security-mail.ts).
  'auth.mfa.enabled', 'auth.mfa.disabled', 'auth.recovery_codes.regenerated', 'auth.provider.linked', 'auth.provider.unlinked',
  'auth.mfa.code_reused',
  'money.wallet.credited', 'money.wallet.debited', 'money.wallet.transfer', 'money.hold.expired',
  'module.registry.installed', 'module.registry.updated', 'module.registry.uninstalled',
  'billing.plan.changed', 'billing.subscription.changed',
  'files.file.uploaded',
];

export const KERNEL_SCHEMAS: readonly SchemaDeclaration[] = [
  ...Object.entries(shown).map(([type, schema]) => ({ type, version: DEFAULT_SCHEMA_VERSION, schema })),
  ...unshown.map((type) => ({ type, version: DEFAULT_SCHEMA_VERSION, schema: ANY_OBJECT_SCHEMA })),
];

/** Who registered the kernel's schemas (event_schemas.owner). */
export const KERNEL_OWNER = 'kernel';
