import Joi from 'joi';

/**
 * Ids in requests, in the one form PostgreSQL's uuid type reads and the documents publish (format
 * uuid): 8-4-4-4-12 hex digits with `-`, no wrapper. joi's bare `uuid()` also takes `{…}`, `(…)`
 * and `[…]` wrappers, `:` separators and no separators at all, which the cast refuses or the
 * documents do not state: such a value passed the guard and failed in the database as a nameless
 * error (issue 15, POST /auth/invite with such a role_id). Every request field that names a UUID id
 * uses one of these (api/routes/<domain>/*.schemas.ts); responses may stay looser.
 */
const canonical = { separator: '-', wrapper: false } as const;

/**
 * A UUID of any version: ids the platform issues are v7 (docs/reference/conventions.md#rule-4, common/ids.ts newId), but a
 * path or body id of another version was always accepted and answered as unknown (404), and stays so.
 */
export const uuid = Joi.string().guid(canonical);

/**
 * A UUID v4 or v7 (docs/reference/conventions.md#rule-4 and #rule-20: ids and idempotency keys), for the fields that already took only
 * those. The documents state the versions as a pattern (api/openapi/json-schema.ts).
 */
export const uuidV4OrV7 = Joi.string().guid({ version: ['uuidv4', 'uuidv7'], ...canonical });

/**
 * A tenant id: UUID v4 or v7 (docs/reference/conventions.md#rule-4), the only ids `withTenant` sets, so another version is a
 * 400 here rather than a 500 there (issue 15, POST /auth/switch-tenant with a v3 UUID).
 */
export const tenantId = uuidV4OrV7;
