import { acceptsString, resolve, type Components, type Schema } from './schema';

/**
 * The operations of the OpenAPI documents that take an id, and where: a path parameter named `id`
 * or `…Id`, or a body member named `id`, `…Id`, `…Ids`, `…_id` or `…_ids` (at the top or in the
 * items of an array member), whose schema accepts an id the platform hands out. Nothing here names
 * a route: a new route with an id is found in the documents and tried with no code written for it.
 */

/** The kinds of resource a tenant owns, each seeded by test/helpers/cross-tenant/seed.ts. */
export const ID_KINDS = [
  'tenant', 'user', 'session', 'role', 'apiKey', 'company', 'contact', 'file', 'tusUpload', 'wallet', 'transaction',
  'hold', 'transfer', 'fileJob', 'exportJob', 'auditRecord', 'deadLetter', 'webhookEndpoint', 'subscription',
] as const;
export type IdKind = (typeof ID_KINDS)[number];

/**
 * Which kinds a name stands for: a path segment before `{id}` (`/wallets/{id}`), or a parameter's or
 * member's stem (`fromWalletId` → wallet). A name missing here stands for every kind.
 */
const KINDS_BY_NAME: Record<string, readonly IdKind[]> = {
  tenants: ['tenant'], tenant: ['tenant'],
  users: ['user'], user: ['user'],
  sessions: ['session'], session: ['session'],
  roles: ['role'], role: ['role'],
  'api-keys': ['apiKey'], apikey: ['apiKey'], key: ['apiKey'],
  companies: ['company'], company: ['company'],
  contacts: ['contact'], contact: ['contact'],
  files: ['file'], file: ['file'], avatarfile: ['file'],
  tus: ['tusUpload'],
  wallets: ['wallet'], wallet: ['wallet'],
  transactions: ['transaction', 'hold', 'transfer'], transaction: ['transaction', 'hold', 'transfer'],
  originaltransaction: ['transaction', 'transfer'],
  holds: ['hold'], hold: ['hold'], holdtransaction: ['hold'],
  jobs: ['fileJob', 'exportJob'], job: ['fileJob', 'exportJob'], export: ['exportJob'],
  records: ['auditRecord'], audit: ['auditRecord'], record: ['auditRecord'],
  dlq: ['deadLetter'], deadletter: ['deadLetter'],
  endpoints: ['webhookEndpoint'], endpoint: ['webhookEndpoint'],
  subscriptions: ['subscription'], subscription: ['subscription'],
};

const ID_NAME = /^(id|.+Id|.+Ids|.+_id|.+_ids)$/;

export interface IdSlot {
  /** `path` or `body`. */
  in: 'path' | 'body';
  /** The parameter, or the body member's path (`records[].entityId`). */
  name: string;
  /** The kinds the name stands for, or every kind. */
  kinds: readonly IdKind[];
  /** Whether the name told the kinds (false: every kind is tried). */
  known: boolean;
  /** The member's schema (its items' for a list of ids). */
  schema: Schema;
  /** A path parameter, or a body member the schema requires. */
  required: boolean;
  /** A list of ids (`…Ids`). */
  list: boolean;
  /**
   * A string with no format and no pattern (an audit record's entityId): the platform keeps it as the
   * caller's own text and looks nothing up by it, so a 2xx answer is no leak by itself.
   */
  freeText: boolean;
}

export interface Operation {
  namespace: string;
  operationId: string;
  method: string;
  /** The document's path, relative to /v1: `/wallets/{id}`. */
  path: string;
  auth: boolean;
  parameters: { name: string; in: string; required: boolean; schema: Schema }[];
  /** The request body's media type and schema, when it has one. */
  body?: { mediaType: string; schema: Schema };
  components: Components;
  slots: IdSlot[];
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, {
    operationId: string;
    security?: unknown[];
    parameters?: { name: string; in: string; required?: boolean; schema?: Schema }[];
    requestBody?: { content: Record<string, { schema?: Schema }> };
  }>>;
  components?: { schemas?: Components };
}

/** The kinds a name stands for: itself, then its stem without the id suffix, then its last word. */
export function kindsOf(name: string): { kinds: readonly IdKind[]; known: boolean } {
  const stem = name.replace(/(_ids?|Ids?)$/, '');
  const lastWord = stem.split(/(?=[A-Z])|_/).pop() ?? stem;
  for (const candidate of [name, stem, lastWord].map((text) => text.toLowerCase())) {
    const kinds = KINDS_BY_NAME[candidate];
    if (kinds) return { kinds, known: true };
  }
  return { kinds: ID_KINDS, known: false };
}

/**
 * The kinds of a path parameter: its own name when that tells (`walletId`), else the literal segment
 * before it (`/holds/{id}` → hold).
 */
function pathSlotKinds(path: string, name: string): { kinds: readonly IdKind[]; known: boolean } {
  const own = kindsOf(name);
  if (own.known || name !== 'id') return own;
  const segments = path.split('/');
  const at = segments.indexOf(`{${name}}`);
  const before = segments.slice(0, at).reverse().find((segment) => !segment.startsWith('{'));
  return before ? kindsOf(before) : own;
}

/** Whether the slot's schema takes the id: a slot whose pattern no id of the kind meets is not tried with it. */
export const acceptsId = (slot: Pick<IdSlot, 'schema'>, id: string): boolean => acceptsString(slot.schema, id);

const isFreeText = (schema: Schema): boolean => !schema.format && !schema.pattern && !schema.enum;

function bodySlots(schema: Schema | undefined, components: Components, prefix = ''): Omit<IdSlot, 'kinds' | 'known'>[] {
  const resolved = resolve(schema, components);
  const slots: Omit<IdSlot, 'kinds' | 'known'>[] = [];
  for (const [name, raw] of Object.entries(resolved.properties ?? {})) {
    const member = resolve(raw, components);
    const items = member.items ? resolve(member.items, components) : undefined;
    if (ID_NAME.test(name)) {
      const idSchema = items ?? member;
      slots.push({
        in: 'body', name: `${prefix}${name}`, schema: idSchema, list: items !== undefined, freeText: isFreeText(idSchema),
        required: resolved.required?.includes(name) ?? false,
      });
    } else if (items?.properties && !prefix) {
      slots.push(...bodySlots(items, components, `${name}[].`));
    }
  }
  return slots;
}

/**
 * Every operation of the documents with at least one id slot whose schema accepts one of `sampleIds`
 * (the ids a tenant really has: a member named `permission_ids` holds permission keys, which no id
 * matches, so it is no slot).
 */
export function operationsWithIds(documents: ReadonlyMap<string, OpenApiDocument>, sampleIds: readonly string[]): Operation[] {
  const operations: Operation[] = [];
  for (const [namespace, document] of documents) {
    const components = document.components?.schemas ?? {};
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        const parameters = (operation.parameters ?? []).map((parameter) => ({
          name: parameter.name, in: parameter.in, required: parameter.required ?? false, schema: resolve(parameter.schema, components),
        }));
        const [mediaType, content] = Object.entries(operation.requestBody?.content ?? {})[0] ?? [];
        const body = mediaType ? { mediaType, schema: content?.schema ?? {} } : undefined;
        const candidates = [
          ...parameters.filter((parameter) => parameter.in === 'path' && ID_NAME.test(parameter.name)).map((parameter) => ({
            in: 'path' as const, name: parameter.name, schema: parameter.schema, list: false, freeText: isFreeText(parameter.schema), required: true,
            ...pathSlotKinds(path, parameter.name),
          })),
          ...(body?.mediaType === 'application/json' ? bodySlots(body.schema, components).map((slot) => ({ ...slot, ...kindsOf(slot.name.split('.').pop()!) })) : []),
        ];
        const slots = candidates.filter((slot) => sampleIds.some((id) => acceptsId(slot, id)));
        if (slots.length === 0) continue;
        operations.push({
          namespace, operationId: operation.operationId, method: method.toUpperCase(), path,
          auth: (operation.security ?? [{}]).length > 0, parameters, body, components, slots,
        });
      }
    }
  }
  return operations;
}
