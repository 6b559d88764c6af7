import { randomBytes } from 'node:crypto';
import { mfaKeys } from '../../../services/identity/mfa/mfa-keys';
import {
  hashRecoveryCode, newRecoveryCodes, normalizeRecoveryCode, RECOVERY_CODE_COUNT,
} from '../../../services/identity/mfa/recovery-code-crypto';
import { openTotpSecret, sealTotpSecret } from '../../../services/identity/mfa/secret-crypto';
import { matchTotp, newTotpSecret, provisioning } from '../../../services/identity/mfa/totp';
import { base32Decode, totp } from '../../helpers/totp';

/** The crypto of two-factor: TOTP (RFC 6238), sealed secrets, recovery codes and their hashes. */
const KEY = randomBytes(32).toString('base64');
const USER = '0190f3a4-0000-7000-8000-000000000001';
const OTHER_USER = '0190f3a4-0000-7000-8000-000000000002';

// RFC 6238 appendix B, SHA-1: the ASCII secret "12345678901234567890"; 6-digit codes are the last six
// digits of the 8-digit values the RFC lists.
const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
const RFC_VECTORS: [number, string][] = [
  [59, '287082'], [1111111109, '081804'], [1111111111, '050471'], [1234567890, '005924'], [2000000000, '279037'],
];

describe('the tests\' own TOTP (node:crypto)', () => {
  it.each(RFC_VECTORS)('at %i s gives %s (RFC 6238)', (seconds, code) => {
    expect(base32Decode(RFC_SECRET).toString('ascii')).toBe('12345678901234567890');
    expect(totp(RFC_SECRET, Math.floor(seconds / 30))).toBe(code);
  });
});

describe('matchTotp', () => {
  it.each(RFC_VECTORS)('accepts the RFC 6238 code of %i s as that step', async (seconds, code) => {
    expect(await matchTotp(RFC_SECRET, code, null, seconds * 1000)).toBe(Math.floor(seconds / 30));
  });

  it('accepts the previous and the next step, not two steps away', async () => {
    const secret = newTotpSecret();
    const now = Date.now();
    const step = Math.floor(now / 30_000);
    for (const offset of [-1, 0, 1]) expect(await matchTotp(secret, totp(secret, step + offset), null, now)).toBe(step + offset);
    for (const offset of [-2, 2]) expect(await matchTotp(secret, totp(secret, step + offset), null, now)).toBeNull();
  });

  it('refuses a step at or before the last accepted one (replay), and a later one is still good', async () => {
    const secret = newTotpSecret();
    const now = Date.now();
    const step = Math.floor(now / 30_000);
    expect(await matchTotp(secret, totp(secret, step), step, now)).toBeNull();
    expect(await matchTotp(secret, totp(secret, step - 1), step, now)).toBeNull();
    expect(await matchTotp(secret, totp(secret, step + 1), step, now)).toBe(step + 1);
    // Every step of the window used up: nothing is accepted (and otplib is not asked beyond its window).
    expect(await matchTotp(secret, totp(secret, step + 1), step + 1, now)).toBeNull();
  });

  it('refuses a code of another secret', async () => {
    expect(await matchTotp(newTotpSecret(), totp(newTotpSecret()), null)).toBeNull();
  });
});

describe('provisioning', () => {
  it('makes a 160-bit base32 secret, an otpauth URL naming issuer and account, and a PNG QR code', async () => {
    const secret = newTotpSecret();
    expect(base32Decode(secret)).toHaveLength(20);
    const result = await provisioning('Acme Platform', 'ada@example.test', secret);
    const url = new URL(result.otpauthUrl);
    expect(url.protocol).toBe('otpauth:');
    expect(url.host).toBe('totp');
    expect(decodeURIComponent(url.pathname)).toBe('/Acme Platform:ada@example.test');
    expect(url.searchParams.get('secret')).toBe(secret);
    expect(url.searchParams.get('issuer')).toBe('Acme Platform');
    const png = Buffer.from(result.qrCode.replace(/^data:image\/png;base64,/, ''), 'base64');
    expect(png.subarray(1, 4).toString('ascii')).toBe('PNG');
  });
});

describe('sealed TOTP secrets', () => {
  const { secretKey } = mfaKeys(KEY);

  it('open for the same account under the same key, and do not contain the secret', () => {
    const secret = newTotpSecret();
    const sealed = sealTotpSecret(secretKey, USER, secret);
    expect(sealed.includes(Buffer.from(secret))).toBe(false);
    expect(openTotpSecret(secretKey, USER, sealed)).toBe(secret);
    // A fresh nonce each time.
    expect(sealTotpSecret(secretKey, USER, secret).equals(sealed)).toBe(false);
  });

  it('do not open for another account, under another key, or after tampering', () => {
    const sealed = sealTotpSecret(secretKey, USER, newTotpSecret());
    expect(() => openTotpSecret(secretKey, OTHER_USER, sealed)).toThrow();
    expect(() => openTotpSecret(mfaKeys(randomBytes(32).toString('base64')).secretKey, USER, sealed)).toThrow();
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1] ^= 1;
    expect(() => openTotpSecret(secretKey, USER, tampered)).toThrow();
  });

  it('refuse a key that is not 32 bytes', () => {
    expect(() => mfaKeys(randomBytes(16).toString('base64'))).toThrow(/32 bytes/);
  });
});

describe('recovery codes', () => {
  const { recoveryCodeKey, secretKey } = mfaKeys(KEY);

  it('come as 10 distinct 12-character alphanumeric codes', () => {
    const codes = newRecoveryCodes();
    expect(codes).toHaveLength(RECOVERY_CODE_COUNT);
    expect(new Set(codes).size).toBe(RECOVERY_CODE_COUNT);
    for (const code of codes) expect(code).toMatch(/^[0-9a-hjkmnp-tv-z]{12}$/);
  });

  it('hash with a server key, bound to the account, whatever case or grouping the user types', () => {
    const [code] = newRecoveryCodes();
    const hash = hashRecoveryCode(recoveryCodeKey, USER, code);
    expect(hash).toHaveLength(32);
    expect(hashRecoveryCode(recoveryCodeKey, USER, `${code.slice(0, 6).toUpperCase()}-${code.slice(6)}`).equals(hash)).toBe(true);
    expect(hashRecoveryCode(recoveryCodeKey, OTHER_USER, code).equals(hash)).toBe(false);
    expect(hashRecoveryCode(secretKey, USER, code).equals(hash)).toBe(false);
    expect(normalizeRecoveryCode(' AB12c-D34 ')).toBe('ab12cd34');
  });
});
