import { ConfigError, loadConfig } from '../../../common/config';

/** AUTH_PROVIDERS: a JSON array of OpenID Connect providers, checked once at start-up. */
const acme = {
  id: 'acme', name: 'Acme SSO', issuer: 'https://sso.acme.example', clientId: 'platform',
  clientSecret: 'secret', redirectUri: 'https://app.example.com/auth/callback/acme',
};
const providersOf = (value: unknown) => loadConfig({ AUTH_PROVIDERS: typeof value === 'string' ? value : JSON.stringify(value) }).identity.providers;

describe('AUTH_PROVIDERS', () => {
  it('is empty by default and when empty', () => {
    expect(loadConfig({}).identity.providers).toEqual({ list: [], stateTtlSeconds: 600, httpTimeoutMs: 5000, discoveryTtlSeconds: 3600 });
    expect(providersOf('').list).toEqual([]);
  });

  it('fills in the scopes and the client authentication', () => {
    expect(providersOf([acme]).list).toEqual([{ ...acme, scopes: ['openid', 'email', 'profile'], tokenEndpointAuthMethod: 'client_secret_basic' }]);
    const { clientSecret: _secret, ...publicClient } = acme;
    expect(providersOf([publicClient]).list[0].tokenEndpointAuthMethod).toBe('none');
  });

  it.each([
    ['not JSON', 'acme', /not JSON/],
    ['an id outside the pattern', [{ ...acme, id: 'Acme SSO' }], /id/],
    ['a missing issuer', [{ ...acme, issuer: undefined }], /issuer/],
    ['scopes without openid', [{ ...acme, scopes: ['email'] }], /scopes/],
    ['a secret method without a secret', [{ ...acme, clientSecret: undefined, tokenEndpointAuthMethod: 'client_secret_post' }], /needs a clientSecret/],
    ['two providers with one id', [acme, acme], /duplicate/],
    ['an unknown member', [{ ...acme, clientSecrets: 'typo' }], /not allowed/],
  ])('refuses %s', (_what, value, message) => {
    expect(() => providersOf(value)).toThrow(ConfigError);
    expect(() => providersOf(value)).toThrow(message);
  });
});
