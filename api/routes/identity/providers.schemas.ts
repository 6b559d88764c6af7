import Joi from 'joi';
import { uuid } from '../../http/ids';
import type { CallbackQuery } from '../../../services/identity/providers/external-providers';
import { tenantSelection, tokenPair } from './auth.schemas';

/** The id of a configured provider (the pattern AUTH_PROVIDERS and the user_identities table enforce). */
const providerId = Joi.string().pattern(/^[a-z0-9][a-z0-9_-]{0,39}$/);

export interface ProviderParams {
  providerId: string;
}

export const providerParams = Joi.object<ProviderParams>({ providerId: providerId.required() });

export interface UserParams {
  id: string;
}

export const userParams = Joi.object<UserParams>({ id: uuid.required() });

export interface UserProviderParams extends UserParams, ProviderParams {}

export const userProviderParams = Joi.object<UserProviderParams>({ id: uuid.required(), providerId: providerId.required() });

export const providerList = Joi.object({
  data: Joi.array().items(Joi.object({
    id: providerId.required(),
    name: Joi.string().required(),
    type: Joi.string().valid('oidc').required(),
  })).required(),
});

/** Where to send the browser: the provider's authorization endpoint with our request. */
export const redirectResponse = Joi.object({ url: Joi.string().uri({ scheme: ['https', 'http'] }).required() });

/**
 * The provider's redirect (RFC 6749 4.1.2, 4.1.2.1; RFC 9207). Providers add members of their own
 * (session_state, scope, authuser, prompt ...), so unknown members are accepted here and ignored.
 */
export const callbackQuery = Joi.object<CallbackQuery>({
  // RFC 6749 Appendix A: state and code are VSCHAR (printable ASCII); error and error_description
  // (4.1.2.1) are printable ASCII without " and \.
  state: Joi.string().max(512).pattern(/^[\x20-\x7E]+$/).required(),
  code: Joi.string().max(4096).pattern(/^[\x20-\x7E]+$/),
  error: Joi.string().max(100).pattern(/^[\x20\x21\x23-\x5B\x5D-\x7E]+$/),
  error_description: Joi.string().max(1000).pattern(/^[\x20\x21\x23-\x5B\x5D-\x7E]+$/),
  iss: Joi.string().max(1000),
}).unknown(true);

/** A provider link (docs/reference/identity.md#rule-35). */
export const providerLink = Joi.object({
  id: Joi.string().uuid().required(),
  providerId: providerId.required(),
  providerType: Joi.string().valid('oidc').required(),
  externalId: Joi.string().required(),
  email: Joi.string().allow(null).required(),
  displayName: Joi.string().allow(null).required(),
  linkedAt: Joi.string().isoDate().required(),
});

export const providerLinkList = Joi.object({ data: Joi.array().items(providerLink).required() });

/** A sign-in answers like a password login; a link flow answers the new link. */
export const callbackResponse = Joi.alternatives().try(tokenPair, tenantSelection, providerLink);
