import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt, decodeProtectedHeader, exportJWK, exportPKCS8, generateKeyPair } from 'jose';
import { openSuccessor, sealSuccessor, hashRefreshToken, newRefreshToken } from '../../../services/identity/refresh-token-crypto';
import { loadSigningKeys, SigningKeyError } from '../../../services/identity/signing-keys';
import { TokenService } from '../../../services/identity/tokens';
import { isProblem } from '../../../common/problems';

const jwt = { issuer: 'https://issuer.test', audience: 'platform-api' };
const ttl = { accessToken: 900, refreshToken: 604_800, refreshGrace: 10, sessionToken: 300 };
const claims = { sub: '0190a0a0-0000-7000-8000-000000000001', email: 'ada@example.test', tenantId: '0190a0a0-0000-7000-8000-000000000002', roles: ['owner'],
  sid: '0190a0a0-0000-7000-8000-000000000003', mfa: false,
};
/** What the token service issues: the claims above and the sign-in time (the token's auth_time). */
const issued = { ...claims, authTime: 1893455000 };

let dir: string;
beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'jwt-keys-')); });
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function serviceFor(settings: Partial<Parameters<typeof loadSigningKeys>[0]>): Promise<TokenService> {
  const cfg = { ...jwt, keyFile: join(dir, 'keys.json'), ...settings };
  return new TokenService(await loadSigningKeys(cfg), cfg, ttl);
}

async function problemTypeOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  return isProblem(error) ? error.type : String(error);
}

describe('signing keys', () => {
  it('generates the key file once (owner-only), and the next load uses the same key', async () => {
    const first = await serviceFor({});
    const path = join(dir, 'keys.json');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const saved = readFileSync(path, 'utf8');
    const second = await serviceFor({});
    expect(readFileSync(path, 'utf8')).toBe(saved);
    expect(second.jwks).toEqual(first.jwks);
  });

  it('agrees on one key when several processes create the file at once', async () => {
    const services = await Promise.all([1, 2, 3, 4].map(() => serviceFor({})));
    expect(new Set(services.map((s) => s.jwks.keys[0].kid)).size).toBe(1);
  });

  it('accepts a PEM from configuration, and refuses a key that is not P-256', async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const fromPem = await serviceFor({ privateKey: await exportPKCS8(privateKey) });
    const { token } = await fromPem.issueAccessToken(issued);
    await expect(fromPem.verifyAccessToken(token)).resolves.toMatchObject(claims);

    const rsa = await generateKeyPair('RS256', { extractable: true });
    await expect(serviceFor({ privateKey: JSON.stringify(await exportJWK(rsa.privateKey)) })).rejects.toThrow(SigningKeyError);
  });

  it('rotates by kid: tokens of the previous key still verify, and JWKS lists both', async () => {
    const old = await serviceFor({});
    const { token: oldToken } = await old.issueAccessToken(issued);
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const rotated = await serviceFor({
      privateKey: JSON.stringify(await exportJWK(privateKey)),
      previousPublicKeys: JSON.stringify(old.jwks),
    });
    const { token: newToken } = await rotated.issueAccessToken(issued);
    expect(decodeProtectedHeader(newToken).kid).not.toBe(decodeProtectedHeader(oldToken).kid);
    await expect(rotated.verifyAccessToken(oldToken)).resolves.toMatchObject(claims);
    await expect(rotated.verifyAccessToken(newToken)).resolves.toMatchObject(claims);
    expect(rotated.jwks.keys.map((k) => k.kid)).toEqual([decodeProtectedHeader(newToken).kid, decodeProtectedHeader(oldToken).kid]);
    // The old service never knew the new key.
    expect(await problemTypeOf(old.verifyAccessToken(newToken))).toBe('unauthorized');
  });
});

describe('access token claims', () => {
  it('carries exactly sub, email, tenantId, roles, iat, exp, iss, aud', async () => {
    const service = await serviceFor({});
    const now = new Date('2030-01-01T00:00:00Z');
    const { token, expiresAt } = await service.issueAccessToken(issued, now);
    expect(decodeJwt(token)).toEqual({ ...claims, auth_time: issued.authTime, iat: 1893456000, exp: 1893456900, iss: jwt.issuer, aud: jwt.audience });
    expect(expiresAt.toISOString()).toBe('2030-01-01T00:15:00.000Z');
  });

  it('reports an expired token as token-expired and a bad one as unauthorized', async () => {
    const service = await serviceFor({});
    const { token } = await service.issueAccessToken(issued, new Date(Date.now() - 901_000));
    expect(await problemTypeOf(service.verifyAccessToken(token))).toBe('token-expired');
    expect(await problemTypeOf(service.verifyAccessToken('a.b.c'))).toBe('unauthorized');
  });

  it('keeps selection and access tokens apart', async () => {
    const service = await serviceFor({});
    const selection = await service.issueSelectionToken(claims.sub);
    const access = await service.issueAccessToken(issued);
    expect(await problemTypeOf(service.verifyAccessToken(selection.token))).toBe('unauthorized');
    expect(await problemTypeOf(service.verifySelectionToken(access.token))).toBe('unauthorized');
    await expect(service.verifySelectionToken(selection.token)).resolves.toMatchObject({ userId: claims.sub });
  });
});

describe('refresh token crypto', () => {
  it('makes 32-byte base64url tokens and stores 32-byte SHA-256 hashes', () => {
    const token = newRefreshToken();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(hashRefreshToken(token)).toHaveLength(32);
    expect(newRefreshToken()).not.toBe(token);
  });

  it('seals the successor pair so that only the rotated token opens it', () => {
    const token = newRefreshToken();
    const pair = { accessToken: 'a', refreshToken: 'b', expiresAt: '2030-01-01T00:15:00.000Z' };
    const sealed = sealSuccessor(token, pair);
    expect(openSuccessor(token, sealed)).toEqual(pair);
    expect(() => openSuccessor(newRefreshToken(), sealed)).toThrow();
    expect(sealed.includes(Buffer.from('2030-01-01'))).toBe(false);
  });
});
