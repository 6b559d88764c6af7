import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importJWK, SignJWT, type JWK } from 'jose';
import { loadSigningKeys } from '../../../services/identity/signing-keys';
import { TokenService } from '../../../services/identity/tokens';
import { isProblem } from '../../../common/problems';

/**
 * The tokens of an unfinished sign-in (tenant selection, two-factor challenge) carry how the first
 * factor was proved, so the session they end in reports the real method; each kind is refused as the other.
 */
const jwt = { issuer: 'https://issuer.test', audience: 'platform-api' };
const ttl = { accessToken: 900, sessionToken: 300 };
const user = { id: '0190a0a0-0000-7000-8000-000000000001', email: 'ada@example.test' };
const oidc = { method: 'oidc', provider: 'corp-sso' } as const;

let dir: string;
let service: TokenService;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pending-login-'));
  service = new TokenService(await loadSigningKeys({ ...jwt, keyFile: join(dir, 'keys.json') }), { ...jwt, keyFile: join(dir, 'keys.json') }, ttl);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function problemTypeOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  return isProblem(error) ? error.type : String(error);
}

/** A token signed with the real key but with claims of the test's choosing. */
async function forged(typ: string, claims: Record<string, unknown>): Promise<string> {
  const [jwk] = (JSON.parse(readFileSync(join(dir, 'keys.json'), 'utf8')) as { keys: JWK[] }).keys;
  const kid = service.jwks.keys[0].kid;
  return new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid, typ }).setSubject(user.id).setIssuer(jwt.issuer)
    .setAudience(jwt.audience).setIssuedAt().setExpirationTime('5m').sign(await importJWK({ ...jwk, alg: 'ES256' }, 'ES256'));
}

describe('tenant-selection tokens', () => {
  it('carry the login method (password by default, the provider for a provider sign-in) and when it was proved', async () => {
    const before = Math.floor(Date.now() / 1000);
    const password = await service.issueSelectionToken(user.id);
    const provider = await service.issueSelectionToken(user.id, oidc);
    const authenticatedAt = expect.any(Number) as unknown as number;
    await expect(service.verifySelectionToken(password.token)).resolves.toEqual({ userId: user.id, how: { method: 'password' }, authenticatedAt });
    await expect(service.verifySelectionToken(provider.token)).resolves.toEqual({ userId: user.id, how: oidc, authenticatedAt });
    expect((await service.verifySelectionToken(password.token)).authenticatedAt).toBeGreaterThanOrEqual(before);
  });

  it('read a token from before the claim existed as a password login, and refuse a malformed claim', async () => {
    await expect(service.verifySelectionToken(await forged('tenant-selection+jwt', {}))).resolves.toMatchObject({ how: { method: 'password' } });
    for (const login of ['oidc:', 'oidc:Not A Provider', 'saml:x', 7]) {
      expect(await problemTypeOf(service.verifySelectionToken(await forged('tenant-selection+jwt', { login })))).toBe('unauthorized');
    }
  });
});

describe('two-factor challenge tokens', () => {
  it('name the account, its address and the method, and last as long as a session token', async () => {
    const challenge = await service.issueMfaChallengeToken(user, oidc);
    expect(challenge.expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(300_000);
    await expect(service.verifyMfaChallengeToken(challenge.token)).resolves.toEqual({ userId: user.id, email: user.email, how: oidc });
  });

  it('are not selection or access tokens, and those are not challenges', async () => {
    const challenge = await service.issueMfaChallengeToken(user, oidc);
    const selection = await service.issueSelectionToken(user.id, oidc);
    expect(await problemTypeOf(service.verifySelectionToken(challenge.token))).toBe('unauthorized');
    expect(await problemTypeOf(service.verifyAccessToken(challenge.token))).toBe('unauthorized');
    expect(await problemTypeOf(service.verifyMfaChallengeToken(selection.token))).toBe('unauthorized');
    expect(await problemTypeOf(service.verifyMfaChallengeToken(await forged('mfa-challenge+jwt', { login: 'password' })))).toBe('unauthorized');
  });
});
