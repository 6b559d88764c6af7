import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { z } from 'zod';
import type { AuthProviderSettings, Config } from '../../../common/config';
import { problems, type Problem } from '../../../common/problems';

/**
 * The relying-party half of OpenID Connect for one configured provider: discovery (cached), the
 * authorization request with PKCE S256, the code exchange, ID token verification and, when the ID
 * token carries no address, the userinfo call. Plain fetch; jose only for the JWKS and the JWT.
 *
 * Failures are problems: what the user or an attacker can cause (a refused code, a bad ID token)
 * is 401 unauthorized; what the provider or our registration with it causes is 502 bad-gateway,
 * or 504 gateway-timeout when it does not answer in time.
 */

/** Only asymmetric signatures: an HMAC ID token would be keyed with the client secret, and none is no signature. */
const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

/** Clock difference tolerated between the provider and us. */
const CLOCK_TOLERANCE_SECONDS = 60;

const httpsOrHttpUrl = z.string().url();

/** OpenID Connect Discovery 1.0, section 3: the members this client uses. */
const discoveryDocument = z.object({
  issuer: z.string(),
  authorization_endpoint: httpsOrHttpUrl,
  token_endpoint: httpsOrHttpUrl,
  jwks_uri: httpsOrHttpUrl,
  userinfo_endpoint: httpsOrHttpUrl.optional(),
  code_challenge_methods_supported: z.array(z.string()).optional(),
  id_token_signing_alg_values_supported: z.array(z.string()).optional(),
  authorization_response_iss_parameter_supported: z.boolean().optional(),
});
type DiscoveryDocument = z.infer<typeof discoveryDocument>;

interface Discovered {
  metadata: DiscoveryDocument;
  jwks: ReturnType<typeof createRemoteJWKSet>;
  algorithms: string[];
}

const tokenResponse = z.object({
  id_token: z.string().min(1),
  access_token: z.string().optional(),
  token_type: z.string().optional(),
});
const tokenError = z.object({ error: z.string() });

/** What the provider asserts about the person, after every check. */
export interface ProviderClaims {
  subject: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
  givenName: string | null;
  familyName: string | null;
}

export interface AuthorizationRequest {
  state: string;
  nonce: string;
  codeChallenge: string;
}

export interface CallbackIssuer {
  /** RFC 9207 `iss` of the authorization response, when the provider sent one. */
  iss?: string;
}

type ProviderOptions = Pick<Config['identity']['providers'], 'httpTimeoutMs' | 'discoveryTtlSeconds' | 'stateTtlSeconds'>;

export class OidcClient {
  private discovery?: { fetchedAt: number; value: Promise<Discovered> };

  constructor(readonly settings: AuthProviderSettings, private readonly options: ProviderOptions) {}

  /** The provider's authorization endpoint with our request (RFC 6749 4.1.1, RFC 7636, OIDC Core 3.1.2.1). */
  async authorizationUrl(request: AuthorizationRequest): Promise<string> {
    const { metadata } = await this.discovered();
    const url = new URL(metadata.authorization_endpoint);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', this.settings.clientId);
    url.searchParams.set('redirect_uri', this.settings.redirectUri);
    url.searchParams.set('scope', this.settings.scopes.join(' '));
    url.searchParams.set('state', request.state);
    url.searchParams.set('nonce', request.nonce);
    url.searchParams.set('code_challenge', request.codeChallenge);
    url.searchParams.set('code_challenge_method', 'S256');
    return url.toString();
  }

  /**
   * RFC 9207: a provider that announces the `iss` response parameter must send it, and whoever sends
   * it must name this issuer, so a response from another provider (a mix-up) is refused.
   */
  async checkResponseIssuer(response: CallbackIssuer): Promise<void> {
    const { metadata } = await this.discovered();
    if (response.iss === undefined && metadata.authorization_response_iss_parameter_supported) {
      throw problems.unauthorized('The provider response does not name its issuer');
    }
    if (response.iss !== undefined && response.iss !== metadata.issuer) {
      throw problems.unauthorized('The provider response comes from another issuer');
    }
  }

  /**
   * The code exchange with the PKCE verifier, then the ID token checks of OIDC Core 3.1.3.7; the
   * address comes from userinfo when the ID token has none (providers that keep claims out of it).
   */
  async claimsFor(code: string, codeVerifier: string, nonce: string): Promise<ProviderClaims> {
    const tokens = await this.exchangeCode(code, codeVerifier);
    const idToken = await this.verifyIdToken(tokens.id_token, nonce);
    const claims = claimsOf(idToken);
    if (claims.email !== null || !tokens.access_token) return claims;
    const { metadata } = await this.discovered();
    if (!metadata.userinfo_endpoint) return claims;
    const userinfo = await this.userinfo(metadata.userinfo_endpoint, tokens.access_token);
    // OIDC Core 5.3.2: userinfo about another subject must not be used.
    if (userinfo.sub !== claims.subject) throw problems.unauthorized('The provider userinfo names another subject');
    return { ...claimsOf({ ...userinfo, ...idToken }), subject: claims.subject };
  }

  private async exchangeCode(code: string, codeVerifier: string): Promise<z.infer<typeof tokenResponse>> {
    const { metadata } = await this.discovered();
    const { clientId, clientSecret, redirectUri, tokenEndpointAuthMethod } = this.settings;
    const body = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: codeVerifier });
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    if (tokenEndpointAuthMethod === 'client_secret_basic') {
      // RFC 6749 2.3.1: both parts are form-encoded before they are joined and base64-encoded.
      const credentials = `${formEncode(clientId)}:${formEncode(clientSecret ?? '')}`;
      headers.authorization = `Basic ${Buffer.from(credentials).toString('base64')}`;
    } else {
      body.set('client_id', clientId);
      if (tokenEndpointAuthMethod === 'client_secret_post') body.set('client_secret', clientSecret ?? '');
    }
    const response = await this.fetch(metadata.token_endpoint, { method: 'POST', headers, body });
    const json = await this.json(response);
    if (response.ok) return this.parse(tokenResponse, json, 'token response');
    const refusal = tokenError.safeParse(json);
    // invalid_grant: the code is unknown, used, expired, or its PKCE verifier does not match.
    if (response.status < 500 && refusal.success && refusal.data.error === 'invalid_grant') {
      throw problems.unauthorized('The provider refused the authorization code');
    }
    throw problems.badGateway(`The provider refused the token request (${refusal.success ? refusal.data.error : response.status})`);
  }

  private async verifyIdToken(idToken: string, nonce: string): Promise<JWTPayload> {
    const { metadata, jwks, algorithms } = await this.discovered();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(idToken, jwks, {
        issuer: metadata.issuer,
        audience: this.settings.clientId,
        algorithms,
        requiredClaims: ['sub', 'iat', 'exp'],
        // Issued for a sign-in we started: never older than the sign-in may last.
        maxTokenAge: this.options.stateTtlSeconds,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
      }));
    } catch (error) {
      throw idTokenProblem(error);
    }
    // OIDC Core 3.1.3.7 (3, 4): with several audiences, we must be the authorized party.
    if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== this.settings.clientId) {
      throw problems.unauthorized('The ID token was issued to another client');
    }
    if (payload.nonce !== nonce) throw problems.unauthorized('The ID token belongs to another sign-in (nonce)');
    if (typeof payload.sub !== 'string' || payload.sub.length === 0 || payload.sub.length > 255) {
      throw problems.unauthorized('The ID token has no usable subject');
    }
    return payload;
  }

  private async userinfo(endpoint: string, accessToken: string): Promise<Record<string, unknown>> {
    const response = await this.fetch(endpoint, { headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' } });
    if (!response.ok) throw problems.badGateway(`The provider userinfo answered ${response.status}`);
    return this.parse(z.object({ sub: z.string() }).loose(), await this.json(response), 'userinfo');
  }

  /** The discovery document, fetched once per discoveryTtlSeconds; a failed fetch is not kept. */
  private discovered(): Promise<Discovered> {
    const now = Date.now();
    if (!this.discovery || now - this.discovery.fetchedAt > this.options.discoveryTtlSeconds * 1000) {
      const value = this.discover();
      this.discovery = { fetchedAt: now, value };
      value.catch(() => {
        if (this.discovery?.value === value) this.discovery = undefined;
      });
    }
    return this.discovery.value;
  }

  private async discover(): Promise<Discovered> {
    const url = `${this.settings.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    const response = await this.fetch(url, { headers: { accept: 'application/json' } });
    if (!response.ok) throw problems.badGateway(`The provider's discovery document answered ${response.status}`);
    const metadata = this.parse(discoveryDocument, await this.json(response), 'discovery document');
    // Discovery 4.3: the document must name exactly the issuer we asked, or it describes another provider.
    if (metadata.issuer !== this.settings.issuer) throw problems.badGateway('The provider\'s discovery document names another issuer');
    if (metadata.code_challenge_methods_supported && !metadata.code_challenge_methods_supported.includes('S256')) {
      throw problems.badGateway('The provider does not support PKCE with S256');
    }
    const offered = metadata.id_token_signing_alg_values_supported;
    const algorithms = offered ? ASYMMETRIC_ALGORITHMS.filter((alg) => offered.includes(alg)) : ['RS256'];
    if (algorithms.length === 0) throw problems.badGateway('The provider signs ID tokens with no algorithm we accept');
    const jwks = createRemoteJWKSet(new URL(metadata.jwks_uri), { timeoutDuration: this.options.httpTimeoutMs });
    return { metadata, jwks, algorithms };
  }

  private async fetch(url: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(this.options.httpTimeoutMs) });
    } catch (error) {
      if (error instanceof DOMException && error.name === 'TimeoutError') {
        throw problems.timeout(`The provider ${this.settings.id} did not answer in time`);
      }
      throw problems.badGateway(`The provider ${this.settings.id} could not be reached`);
    }
  }

  private async json(response: Response): Promise<unknown> {
    try {
      return await response.json();
    } catch {
      throw problems.badGateway(`The provider ${this.settings.id} answered ${response.status} without JSON`);
    }
  }

  private parse<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
    const parsed = schema.safeParse(value);
    if (!parsed.success) throw problems.badGateway(`The provider's ${what} is malformed`);
    return parsed.data;
  }
}

function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, '+');
}

/** An unreachable key set is the provider's fault; any other failure is the token's. */
function idTokenProblem(error: unknown): Problem {
  if (error instanceof joseErrors.JWKSTimeout) return problems.timeout('The provider\'s keys did not arrive in time');
  if (!(error instanceof joseErrors.JOSEError)) return problems.badGateway('The provider\'s keys could not be fetched');
  if (error instanceof joseErrors.JWTExpired) return problems.unauthorized('The ID token has expired');
  return problems.unauthorized('The ID token is not valid');
}

const text = (value: unknown, max: number): string | null =>
  (typeof value === 'string' && value.trim() !== '' ? value.trim().slice(0, max) : null);

/** An address we can keep: one @, no spaces, at most 254 characters; stored in lower case like every address. */
function emailOf(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const email = value.trim().toLowerCase();
  return email.length <= 254 && /^[^\s@]+@[^\s@]+$/.test(email) ? email : null;
}

function claimsOf(payload: Record<string, unknown>): ProviderClaims {
  return {
    subject: String(payload.sub),
    email: emailOf(payload.email),
    // Some providers send the boolean as a string.
    emailVerified: payload.email_verified === true || payload.email_verified === 'true',
    name: text(payload.name, 200),
    givenName: text(payload.given_name, 100),
    familyName: text(payload.family_name, 100),
  };
}
