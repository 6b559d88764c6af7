import { newPassword } from '../../../api/routes/identity/auth.schemas';
import { fieldErrorsOf } from '../../../api/http/field-errors';
import { hashPassword, isBreachedPassword, verifyPassword } from '../../../services/identity/passwords';

/** The password rules of document 1: Argon2id, at least 12 characters, not a known breached password. */
function codesFor(password: unknown): string[] {
  const { error } = newPassword.validate(password, { abortEarly: false });
  return error ? fieldErrorsOf(error, 'password').map((e) => e.code) : [];
}

describe('new-password rules', () => {
  it.each([
    ['11 characters', 'abcdefghijk', ['TOO_SHORT']],
    ['12 characters', 'v9#kLq2!mZp4', []],
    ['a breached password', 'iloveyou1234', ['BREACHED_PASSWORD']],
    ['a breached password in other case', 'PassWord1234', ['BREACHED_PASSWORD']],
    ['a long passphrase', 'copper kettle under the stairs', []],
    ['Unicode, spaces and emoji (ASVS 2.1.4)', 'pässwörd 🔐 日本語の鍵 ok', []],
    ['257 characters', 'x'.repeat(257), ['TOO_LONG']],
    ['not a string', 123456789012, ['INVALID_TYPE']],
  ])('%s → %j', (_case, password, codes) => {
    expect(codesFor(password)).toEqual(codes);
  });

  it('knows common breached passwords and not a fresh passphrase', () => {
    expect(isBreachedPassword('qwertyuiop123')).toBe(true);
    expect(isBreachedPassword('copper kettle under the stairs')).toBe(false);
  });
});

describe('Argon2id hashing', () => {
  it('hashes with the OWASP parameters and verifies only the right password', async () => {
    const hash = await hashPassword('copper kettle under the stairs');
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,p=1,t=2\$/);
    await expect(verifyPassword(hash, 'copper kettle under the stairs')).resolves.toBe(true);
    await expect(verifyPassword(hash, 'copper kettle under the stair')).resolves.toBe(false);
  });

  it('hashes the whole password, never a prefix of it (ASVS 2.1.3)', async () => {
    const long = `${'copper kettle '.repeat(18)}and the stairs`;
    const hash = await hashPassword(long);
    await expect(verifyPassword(hash, long)).resolves.toBe(true);
    await expect(verifyPassword(hash, long.slice(0, 128))).resolves.toBe(false);
    await expect(verifyPassword(hash, long.slice(0, -1))).resolves.toBe(false);
  });

  it('refuses any password for an account without a hash (still doing the hashing work)', async () => {
    await expect(verifyPassword(null, 'anything at all')).resolves.toBe(false);
    await expect(verifyPassword(undefined, '')).resolves.toBe(false);
  });
});
