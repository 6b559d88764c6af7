import { randomBytes } from 'node:crypto';
import argon2 from 'argon2';
import { newPassword } from '../../../api/routes/identity/auth.schemas';
import { fieldErrorsOf } from '../../../api/http/field-errors';
import {
  ARGON2_OPTIONS, hashPassword, isBreachedPassword, passwordNeedsRehash, verifyPassword,
} from '../../../services/identity/passwords';

/** The password rules of docs/reference/identity.md (rules 3 and 43): Argon2id with a pepper, at least 12 characters, not a known breached password. */
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

/** Two peppers as PASSWORD_PEPPER holds them: base64 of 32 bytes. */
const PEPPER = randomBytes(32).toString('base64');
const OTHER_PEPPER = randomBytes(32).toString('base64');

describe('Argon2id hashing', () => {
  it('hashes with the OWASP parameters and the pepper, and verifies only the right password', async () => {
    const hash = await hashPassword(PEPPER, 'copper kettle under the stairs');
    // The pepper's marker is argon2's associated data, "pepper:1" (services/identity/passwords.ts).
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,p=1,t=2,data=cGVwcGVyOjE\$/);
    await expect(verifyPassword(PEPPER, hash, 'copper kettle under the stairs')).resolves.toBe(true);
    await expect(verifyPassword(PEPPER, hash, 'copper kettle under the stair')).resolves.toBe(false);
    expect(passwordNeedsRehash(hash)).toBe(false);
  });

  it('hashes the whole password, never a prefix of it (ASVS 2.1.3)', async () => {
    const long = `${'copper kettle '.repeat(18)}and the stairs`;
    const hash = await hashPassword(PEPPER, long);
    await expect(verifyPassword(PEPPER, hash, long)).resolves.toBe(true);
    await expect(verifyPassword(PEPPER, hash, long.slice(0, 128))).resolves.toBe(false);
    await expect(verifyPassword(PEPPER, hash, long.slice(0, -1))).resolves.toBe(false);
  });

  it('refuses any password for an account without a hash (still doing the hashing work)', async () => {
    await expect(verifyPassword(PEPPER, null, 'anything at all')).resolves.toBe(false);
    await expect(verifyPassword(PEPPER, undefined, '')).resolves.toBe(false);
  });
});

describe('the pepper (ASVS 2.4.5)', () => {
  it('makes a hash that does not verify without the pepper, nor with another one', async () => {
    const hash = await hashPassword(PEPPER, 'copper kettle under the stairs');
    await expect(argon2.verify(hash, 'copper kettle under the stairs')).resolves.toBe(false);
    await expect(verifyPassword(OTHER_PEPPER, hash, 'copper kettle under the stairs')).resolves.toBe(false);
    // Stripping the marker does not make it a hash without the pepper: the marker is hashed too.
    const stripped = hash.replace(',data=cGVwcGVyOjE', '');
    await expect(verifyPassword(PEPPER, stripped, 'copper kettle under the stairs')).resolves.toBe(false);
  });

  it('still verifies a hash made before the pepper, and asks for it to be made again', async () => {
    const legacy = await argon2.hash('copper kettle under the stairs', ARGON2_OPTIONS);
    await expect(verifyPassword(PEPPER, legacy, 'copper kettle under the stairs')).resolves.toBe(true);
    await expect(verifyPassword(PEPPER, legacy, 'copper kettle under the stair')).resolves.toBe(false);
    expect(passwordNeedsRehash(legacy)).toBe(true);
  });

  it('asks for a peppered hash with older parameters to be made again', async () => {
    const older = await argon2.hash('copper kettle under the stairs', {
      ...ARGON2_OPTIONS, timeCost: 1, secret: Buffer.alloc(32), associatedData: Buffer.from('pepper:1'),
    });
    expect(passwordNeedsRehash(older)).toBe(true);
  });
});
