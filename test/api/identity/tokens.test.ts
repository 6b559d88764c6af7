import {
  decodeJwt, decodeProtectedHeader, exportSPKI, generateKeyPair, importJWK, SignJWT, UnsecuredJWT, type JWK,
} from 'jose';
import { loadSigningKeys } from '../../../services/identity/signing-keys';
import { TokenService } from '../../../services/identity/tokens';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase } from '../../helpers/db';
import { call } from '../../helpers/http';
import { get, registerAccount, type RegisteredAccount } from '../../helpers/identity';

/** Access tokens: their claims, the JWKS that verifies them, and every forged or stale token refused. */
let gateway: TestGateway;
let account: RegisteredAccount;

beforeAll(async () => {
  await migrateSharedDatabase();
  gateway = await startTestGateway();
  account = await registerAccount(gateway);
});

afterAll(async () => {
  await gateway?.close();
});

/** A token service with the gateway's own keys but other settings, to forge tokens that only differ there. */
async function tokensWith(jwt: Partial<TestGateway['config']['identity']['jwt']>): Promise<TokenService> {
  const settings = { ...gateway.config.identity.jwt, ...jwt };
  return new TokenService(await loadSigningKeys(gateway.config.identity.jwt), settings, gateway.config.identity.ttl);
}

const claimsOf = (a: RegisteredAccount) => ({
  sub: a.user.id, email: a.user.email, tenantId: a.tenant.id, roles: ['owner'], sid: String(decodeJwt(a.accessToken).sid),
  authTime: Number(decodeJwt(a.accessToken).auth_time), mfa: false,
});

describe('access token', () => {
  it('is an ES256 JWT with a kid and exactly the claims of docs/reference/identity.md#rule-11, plus its session (sid), sign-in time (auth_time) and two-factor state (mfa)', () => {
    expect(decodeProtectedHeader(account.accessToken)).toEqual({ alg: 'ES256', kid: expect.any(String), typ: 'at+jwt' });
    const claims = decodeJwt(account.accessToken);
    expect(Object.keys(claims).sort()).toEqual(['aud', 'auth_time', 'email', 'exp', 'iat', 'iss', 'mfa', 'roles', 'sid', 'sub', 'tenantId']);
    expect(claims).toMatchObject({
      sub: account.user.id, email: account.user.email, tenantId: account.tenant.id, roles: ['owner'], sid: expect.any(String), mfa: false,
      iss: gateway.config.identity.jwt.issuer, aud: gateway.config.identity.jwt.audience,
    });
    expect(claims.exp! - claims.iat!).toBe(15 * 60);
    expect(new Date(account.expiresAt).getTime()).toBe(claims.exp! * 1000);
  });

  it('verifies against the published JWKS', async () => {
    const { status, body } = await call<{ keys: Record<string, unknown>[] }>(`${gateway.baseUrl}/.well-known/jwks.json`);
    expect(status).toBe(200);
    const { kid } = decodeProtectedHeader(account.accessToken);
    const key = body.keys.find((candidate) => candidate.kid === kid);
    expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(body.keys.every((candidate) => !('d' in candidate))).toBe(true);
  });

  it('opens a bearer route', async () => {
    expect((await get(gateway, '/auth/me', account.accessToken)).status).toBe(200);
  });
});

describe('refused tokens', () => {
  const expectUnauthorized = async (token: string | undefined, suffix = 'unauthorized') => {
    const response = await get(gateway, '/auth/me', token);
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({ type: gateway.problemType(suffix) });
  };

  it('no token: 401 unauthorized', async () => {
    await expectUnauthorized(undefined);
    const basic = await call(`${gateway.baseUrl}/v1/auth/me`, { headers: { authorization: 'Basic YTpi' } });
    expect(basic.status).toBe(401);
  });

  it('a tampered signature: 401 unauthorized', async () => {
    const [header, payload, signature] = account.accessToken.split('.');
    const flipped = `${signature.slice(0, 10)}${signature[10] === 'A' ? 'B' : 'A'}${signature.slice(11)}`;
    await expectUnauthorized(`${header}.${payload}.${flipped}`);
  });

  it('a tampered payload (another tenant) under the original signature: 401 unauthorized', async () => {
    const [header, , signature] = account.accessToken.split('.');
    const payload = Buffer.from(JSON.stringify({ ...decodeJwt(account.accessToken), tenantId: '0190a0a0-0000-7000-8000-000000000000' })).toString('base64url');
    await expectUnauthorized(`${header}.${payload}.${signature}`);
  });

  it('an RSA-signed token with the right kid: 401 unauthorized', async () => {
    const { privateKey } = await generateKeyPair('RS256');
    const { kid } = decodeProtectedHeader(account.accessToken);
    const token = await new SignJWT({ email: account.user.email, tenantId: account.tenant.id, roles: ['owner'] })
      .setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt' }).setSubject(account.user.id)
      .setIssuer(gateway.config.identity.jwt.issuer).setAudience(gateway.config.identity.jwt.audience)
      .setIssuedAt().setExpirationTime('15m').sign(privateKey);
    await expectUnauthorized(token);
  });

  it('an HS256 token whose secret is the published public key (key confusion): 401 unauthorized', async () => {
    const { kid } = decodeProtectedHeader(account.accessToken);
    const { keys } = (await call<{ keys: (JWK & { kid: string })[] }>(`${gateway.baseUrl}/.well-known/jwks.json`)).body;
    const jwk = keys.find((key) => key.kid === kid)!;
    const pem = await exportSPKI(await importJWK(jwk, 'ES256') as Parameters<typeof exportSPKI>[0]);
    // The key as a verifier that trusted the header's alg would read it: its PEM, or the JWK itself.
    for (const secret of [pem, JSON.stringify(jwk)]) {
      const token = await new SignJWT({ email: account.user.email, tenantId: account.tenant.id, roles: ['owner'] })
        .setProtectedHeader({ alg: 'HS256', kid, typ: 'at+jwt' }).setSubject(account.user.id)
        .setIssuer(gateway.config.identity.jwt.issuer).setAudience(gateway.config.identity.jwt.audience)
        .setIssuedAt().setExpirationTime('15m').sign(new TextEncoder().encode(secret));
      await expectUnauthorized(token);
    }
  });

  it('an alg:none token: 401 unauthorized', async () => {
    const token = new UnsecuredJWT({ email: account.user.email, tenantId: account.tenant.id, roles: ['owner'] })
      .setSubject(account.user.id).setIssuer(gateway.config.identity.jwt.issuer)
      .setAudience(gateway.config.identity.jwt.audience).setIssuedAt().setExpirationTime('15m').encode();
    await expectUnauthorized(token);
    await expectUnauthorized(`${token}AAAA`);
  });

  it('another issuer or audience: 401 unauthorized', async () => {
    await expectUnauthorized((await (await tokensWith({ issuer: 'https://elsewhere.example' })).issueAccessToken(claimsOf(account))).token);
    await expectUnauthorized((await (await tokensWith({ audience: 'another-api' })).issueAccessToken(claimsOf(account))).token);
  });

  it('a tenant-selection session token used as an access token: 401 unauthorized', async () => {
    const session = await gateway.runtime.identity.tokens.issueSelectionToken(account.user.id);
    await expectUnauthorized(session.token);
  });

  it('an expired token signed with the real key: 401 token-expired', async () => {
    const anHourAgo = new Date(Date.now() - 3600_000);
    const { token } = await gateway.runtime.identity.tokens.issueAccessToken(claimsOf(account), anHourAgo);
    await expectUnauthorized(token, 'token-expired');
  });
});
