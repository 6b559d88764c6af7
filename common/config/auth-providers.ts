import Joi from 'joi';

/**
 * One external sign-in provider (OpenID Connect, authorization code with PKCE). The endpoints come
 * from the issuer's discovery document, so only what the provider registered for us is configured.
 */
export interface AuthProviderSettings {
  /** The :providerId of the routes and of stored links. */
  id: string;
  /** Shown on the login page. */
  name: string;
  issuer: string;
  clientId: string;
  clientSecret?: string;
  /** Where the provider sends the browser back with code and state (the login page's callback). */
  redirectUri: string;
  scopes: string[];
  tokenEndpointAuthMethod: 'client_secret_basic' | 'client_secret_post' | 'none';
}

const authProvider = Joi.object<AuthProviderSettings>({
  id: Joi.string().pattern(/^[a-z0-9][a-z0-9_-]{0,39}$/).required(),
  name: Joi.string().trim().min(1).max(100).required(),
  // http is accepted for local issuers (tests start one); production issuers are https.
  issuer: Joi.string().uri({ scheme: ['https', 'http'] }).required(),
  clientId: Joi.string().min(1).max(500).required(),
  clientSecret: Joi.string().min(1).max(2000),
  redirectUri: Joi.string().uri({ scheme: ['https', 'http'] }).required(),
  // Scope tokens of RFC 6749 3.3; openid is what makes it OpenID Connect.
  scopes: Joi.array().items(Joi.string().pattern(/^[\x21\x23-\x5B\x5D-\x7E]+$/)).has(Joi.string().valid('openid'))
    .default(['openid', 'email', 'profile']),
  tokenEndpointAuthMethod: Joi.string().valid('client_secret_basic', 'client_secret_post', 'none')
    .default((provider: { clientSecret?: string }) => (provider.clientSecret ? 'client_secret_basic' : 'none')),
}).custom((provider: AuthProviderSettings, helpers) => (
  provider.tokenEndpointAuthMethod !== 'none' && !provider.clientSecret
    ? helpers.error('any.invalid', { message: `${provider.tokenEndpointAuthMethod} needs a clientSecret` })
    : provider)).messages({ 'any.invalid': 'provider {{#value.id}}: {{#message}}' });

const providers = Joi.array().items(authProvider).unique('id');

/** AUTH_PROVIDERS is a JSON array of providers (empty: password sign-in only). Joi reports what is thrown. */
export function parseAuthProviders(text: string): AuthProviderSettings[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error('it is not JSON');
  }
  const result = providers.validate(parsed, { abortEarly: false });
  if (result.error) throw new Error(result.error.message);
  return result.value;
}
