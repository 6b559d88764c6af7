import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VerifiedTokens } from '../../../api/runtime/verified-tokens';
import { loadSigningKeys } from '../../../services/identity/signing-keys';
import { TokenService } from '../../../services/identity/tokens';

const jwt = { issuer: 'https://issuer.test', audience: 'platform-api' };
const ttl = { accessToken: 900, sessionToken: 300 };
const claims = { sub: '0190a0a0-0000-7000-8000-000000000001', email: 'ada@example.test', tenantId: '0190a0a0-0000-7000-8000-000000000002', roles: ['owner'],
  sid: '0190a0a0-0000-7000-8000-000000000003', mfa: false,
};
/** What the token service issues: the claims above and the sign-in time (the token's auth_time). */
const issued = { ...claims, authTime: 1893455000 };

let dir: string;
let service: TokenService;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'verified-tokens-'));
  const settings = { ...jwt, keyFile: join(dir, 'keys.json') };
  service = new TokenService(await loadSigningKeys(settings), settings, ttl);
});
afterEach(() => {
  jest.useRealTimers();
  rmSync(dir, { recursive: true, force: true });
});

describe('VerifiedTokens', () => {
  it('verifies a token once and answers later uses from memory', async () => {
    const verify = jest.spyOn(service, 'verifyAccessToken');
    const tokens = new VerifiedTokens(service, 10);
    const { token } = await service.issueAccessToken(issued);
    const first = await tokens.verify(token);
    expect(await tokens.verify(token)).toEqual(first);
    expect(first).toMatchObject(claims);
    expect(verify).toHaveBeenCalledTimes(1);
  });

  it('still refuses a remembered token once it has expired', async () => {
    const tokens = new VerifiedTokens(service, 10);
    const { token } = await service.issueAccessToken(issued);
    await tokens.verify(token);
    jest.useFakeTimers({ now: Date.now() + 901_000, doNotFake: ['nextTick', 'setImmediate'] });
    await expect(tokens.verify(token)).rejects.toMatchObject({ type: 'token-expired' });
  });

  it('never remembers a token that failed verification', async () => {
    const verify = jest.spyOn(service, 'verifyAccessToken');
    const tokens = new VerifiedTokens(service, 10);
    const { token } = await service.issueAccessToken(issued);
    const forged = `${token.slice(0, -4)}AAAA`;
    await expect(tokens.verify(forged)).rejects.toMatchObject({ type: 'unauthorized' });
    await expect(tokens.verify(forged)).rejects.toMatchObject({ type: 'unauthorized' });
    expect(verify).toHaveBeenCalledTimes(2);
  });
});
