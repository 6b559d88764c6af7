import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt, SignJWT, type JWTPayload } from 'jose';
import { loadSigningKeys, type SigningKeys } from '../../../services/identity/signing-keys';
import { TokenService } from '../../../services/identity/tokens';
import { isProblem } from '../../../common/problems';

/** Impersonation tokens: the claims of docs/reference/identity.md#rule-11 plus `act` (RFC 8693), and nothing else is ever accepted. */
const jwt = { issuer: 'https://issuer.test', audience: 'platform-api' };
const ttl = { accessToken: 900, sessionToken: 300 };
const claims = { sub: '0190a0a0-0000-7000-8000-000000000001', email: 'ada@example.test', tenantId: '0190a0a0-0000-7000-8000-000000000002', roles: ['owner'],
  sid: '0190a0a0-0000-7000-8000-000000000003', mfa: false,
};
/** What the token service issues: the claims above and the sign-in time (the token's auth_time). */
const issued = { ...claims, authTime: 1893455000 };
const impersonator = '0190a0a0-0000-7000-8000-000000000003';

let dir: string;
let keys: SigningKeys;
let service: TokenService;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'jwt-keys-'));
  keys = await loadSigningKeys({ ...jwt, keyFile: join(dir, 'keys.json') });
  service = new TokenService(keys, { ...jwt, keyFile: join(dir, 'keys.json') }, ttl);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A token signed with the real key, so only its claims can make it fail. */
function signed(payload: JWTPayload): Promise<string> {
  return new SignJWT(payload)
    .setProtectedHeader({ alg: 'ES256', kid: keys.signing.kid, typ: 'at+jwt' })
    .setIssuer(jwt.issuer).setAudience(jwt.audience).setIssuedAt().setExpirationTime('10m')
    .sign(keys.signing.key);
}

async function problemTypeOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  return isProblem(error) ? error.type : String(error);
}

describe('impersonation tokens', () => {
  it('carry act {sub} and end exactly when the impersonation ends', async () => {
    const now = new Date('2030-01-01T00:00:00.400Z');
    const endsAt = new Date('2030-01-01T01:00:00.000Z');
    const { token, expiresAt } = await service.issueImpersonationToken(issued, impersonator, endsAt, now);
    expect(decodeJwt(token)).toEqual({
      ...claims, auth_time: issued.authTime, act: { sub: impersonator }, iat: 1893456000, exp: 1893459600, iss: jwt.issuer, aud: jwt.audience,
    });
    expect(expiresAt).toEqual(endsAt);
  });

  it('verify to the impersonator; ordinary tokens have none', async () => {
    const { token } = await service.issueImpersonationToken(issued, impersonator, new Date(Date.now() + 3_600_000));
    await expect(service.verifyAccessToken(token)).resolves.toMatchObject({ ...claims, impersonatorId: impersonator });
    const plain = await service.verifyAccessToken((await service.issueAccessToken(issued)).token);
    expect(plain).not.toHaveProperty('impersonatorId');
  });

  it('cannot be issued for an impersonation that has ended', async () => {
    expect(await problemTypeOf(service.issueImpersonationToken(issued, impersonator, new Date(Date.now() - 1000)))).toBe('unauthorized');
  });

  it.each([
    ['act is not an object', { act: impersonator }],
    ['act.sub is not a UUID', { act: { sub: 'root' } }],
    ['act has more than sub (a delegation chain)', { act: { sub: impersonator, act: { sub: claims.sub } } }],
    ['an unknown claim', { permissions: ['*'] }],
    ['an unknown claim next to act', { act: { sub: impersonator }, scope: 'admin' }],
  ])('refuses a correctly signed token when %s', async (_case, extra) => {
    expect(await problemTypeOf(service.verifyAccessToken(await signed({ ...claims, ...extra })))).toBe('unauthorized');
  });

  it('accepts the same signed claims without the extras (the refusals above are about the claims)', async () => {
    await expect(service.verifyAccessToken(await signed(claims))).resolves.toMatchObject(claims);
  });
});
