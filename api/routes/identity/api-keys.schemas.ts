import Joi from 'joi';
import type { PageQuery } from '../../../common/pagination';
import { uuid } from '../../http/ids';
import { pageOf, pageQuery } from '../../http/pagination';
import { permissionKeys } from '../access/roles.schemas';

/** Schemas of the API key routes (issue 35; docs/decisions/identity.md, API keys): camelCase, as the issue shows them. */

export interface ApiKeyIdParams { id: string }
export interface CreateApiKeyBody { name: string; permissions: string[]; expiresAt?: string }

export const apiKeyIdParams = Joi.object<ApiKeyIdParams>({ id: uuid.required() });
export const apiKeyPageQuery = Joi.object<PageQuery>(pageQuery);

// eslint-disable-next-line no-control-regex -- refusing control characters is the point (as role names do)
const name = Joi.string().trim().min(1).max(100).pattern(/^[^\x00-\x1F\x7F-\x9F]+$/, 'printable');

export const createApiKeyBody = Joi.object<CreateApiKeyBody>({
  name: name.required(),
  permissions: permissionKeys.min(1).required().description('Keys the creator holds now; * is not allowed'),
  expiresAt: Joi.string().isoDate().description('When the key stops working (ISO 8601, in the future); absent: never'),
});

const timestamp = Joi.string().isoDate();

/** A key as every answer shows it: never its secret, never its hash. */
export const apiKey = Joi.object({
  id: uuid.required(),
  name: Joi.string().required(),
  prefix: Joi.string().required().description('The visible start of the key, to tell keys apart'),
  permissions: Joi.array().items(Joi.string()).required(),
  createdBy: Joi.string().required().description('The actor id of the creator: a user id, or apikey:<id>'),
  createdAt: timestamp.required(),
  expiresAt: timestamp.allow(null).required(),
  lastUsedAt: timestamp.allow(null).required().description('Written at most once a minute'),
});

/** The creation's answer: the key with its secret, shown this once. */
export const createdApiKey = apiKey.keys({
  key: Joi.string().required().description('The secret key, shown only in this answer; send it as Authorization: Bearer or X-API-Key'),
});

export const apiKeyPage = pageOf(apiKey);
