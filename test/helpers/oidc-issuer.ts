import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { type ProviderContext } from 'oidc-provider';
import type { AuthProviderSettings } from '../../common/config';

/**
 * A real OpenID Connect provider (panva's oidc-provider, the certified implementation) on an
 * ephemeral port of 127.0.0.1, with one confidential client that must use PKCE. Sign-ins are driven
 * programmatically through its development interactions (the login form posted with the account id,
 * cookies carried by hand), and consent is granted by itself as for a first-party client, so a test
 * gets the provider's redirect back to our redirect URI with a genuine code and state.
 */

export interface IssuerAccount {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  given_name?: string;
  family_name?: string;
}

export interface TestIssuer {
  issuer: string;
  /** The AUTH_PROVIDERS entry a gateway needs to use this issuer as provider `id`. */
  settings(id: string, name?: string): AuthProviderSettings;
  /** Makes (or replaces) an account the issuer can sign in. */
  addAccount(account: IssuerAccount): void;
  /**
   * Plays the browser at the provider: opens the authorization URL, signs in as `sub`, and answers
   * the URL the provider redirects to (our redirect URI with code, state and iss), without following it.
   */
  signIn(authorizationUrl: string, sub: string): Promise<URL>;
  /** Rewrites the ID token of the next token response (then the issuer behaves again). */
  tamperNextIdToken(rewrite: (idToken: string) => string | Promise<string>): void;
  close(): Promise<void>;
}

export const TEST_CLIENT = { id: 'platform-test', secret: 'platform-test-secret', redirectUri: 'http://app.example.test/auth/callback' };

class CookieJar {
  private readonly cookies = new Map<string, string>();

  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      this.cookies.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
    }
  }

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

export async function startOidcIssuer(): Promise<TestIssuer> {
  const accounts = new Map<string, IssuerAccount>();
  let tamper: ((idToken: string) => string | Promise<string>) | undefined;
  let handler: ((req: Parameters<ReturnType<Provider['callback']>>[0], res: Parameters<ReturnType<Provider['callback']>>[1]) => void) | undefined;

  const server = createServer((req, res) => handler!(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey = { ...await exportJWK(privateKey), kid: 'test-issuer-key', alg: 'RS256', use: 'sig' };

  const provider = quietly(() => new Provider(issuer, {
    clients: [{
      client_id: TEST_CLIENT.id,
      client_secret: TEST_CLIENT.secret,
      redirect_uris: [TEST_CLIENT.redirectUri],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    }],
    jwks: { keys: [signingKey] },
    cookies: { keys: ['test-issuer-cookie-key'] },
    pkce: { required: () => true },
    // Explicit lifetimes (the library otherwise notes on the console that it used its defaults).
    ttl: { Interaction: 600, Session: 600, Grant: 600, AccessToken: 600, IdToken: 600 },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'given_name', 'family_name'] },
    features: { devInteractions: { enabled: true } },
    async findAccount(_ctx: unknown, sub: string) {
      const account = accounts.get(sub);
      return account && { accountId: sub, claims: () => ({ ...account }) };
    },
    // A first-party client: every scope it asks is granted without a consent screen.
    async loadExistingGrant(ctx: ProviderContext) {
      const { client, session, result } = ctx.oidc;
      const existing = result?.consent?.grantId;
      if (existing) return ctx.oidc.provider.Grant.find(existing);
      const grant = new ctx.oidc.provider.Grant({ accountId: session!.accountId!, clientId: client!.clientId });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
  }));

  provider.use(async (ctx, next) => {
    await next();
    const body = ctx.body as { id_token?: string } | undefined;
    if (ctx.path === '/token' && tamper && body?.id_token) {
      const rewrite = tamper;
      tamper = undefined;
      ctx.body = { ...body, id_token: await rewrite(body.id_token) };
    }
  });
  handler = provider.callback();

  return {
    issuer,
    settings: (id, name = 'Test OIDC') => ({
      id, name, issuer, clientId: TEST_CLIENT.id, clientSecret: TEST_CLIENT.secret, redirectUri: TEST_CLIENT.redirectUri,
      scopes: ['openid', 'email', 'profile'], tokenEndpointAuthMethod: 'client_secret_basic',
    }),
    addAccount: (account) => { accounts.set(account.sub, account); },
    tamperNextIdToken: (rewrite) => { tamper = rewrite; },
    async signIn(authorizationUrl, sub) {
      const jar = new CookieJar();
      let next = new URL(authorizationUrl);
      for (let hop = 0; hop < 10; hop += 1) {
        const atLogin = next.origin === issuer && next.pathname.startsWith('/interaction/');
        const response = await fetch(next, atLogin
          ? {
            method: 'POST', redirect: 'manual',
            headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ prompt: 'login', login: sub }),
          }
          : { redirect: 'manual', headers: { cookie: jar.header() } });
        jar.take(response);
        const location = response.headers.get('location');
        if (!location) throw new Error(`the issuer answered ${response.status} at ${next.pathname}: ${await response.text()}`);
        next = new URL(location, next);
        if (next.origin !== issuer) return next;
      }
      throw new Error('the issuer kept redirecting');
    },
    close: () => new Promise((resolve, reject) => {
      server.close((error) => (error ? reject(error) : resolve()));
      server.closeAllConnections();
    }),
  };
}

/** oidc-provider warns on the console about its development interactions, which are what a test wants. */
function quietly<T>(build: () => T): T {
  const warn = console.warn;
  console.warn = () => undefined;
  try {
    return build();
  } finally {
    console.warn = warn;
  }
}
