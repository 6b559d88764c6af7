import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import argon2 from 'argon2';
import { repoRoot } from '../../common/paths';

/** Document 1: minimum 12 characters. The maximum only bounds the hashing work one request can cause. */
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 256;

/**
 * Argon2id with the OWASP minimum (19 MiB, 2 passes, 1 lane): about 20 ms per hash here, which
 * sets the ceiling of logins per second per core (bench/auth.bench.ts measures both).
 */
export const ARGON2_OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, ARGON2_OPTIONS);
}

/**
 * A hash of a password nobody knows, verified when the e-mail of a login is unknown, so an unknown
 * account costs the same time as a wrong password and the timing tells nothing.
 */
let dummyHash: Promise<string> | undefined;

/**
 * Verifies `password` against `hash`, or against the dummy hash when there is none (unknown
 * account, or an account without a password); false in those cases whatever the password.
 */
export async function verifyPassword(hash: string | null | undefined, password: string): Promise<boolean> {
  if (!hash) {
    dummyHash ??= hashPassword(randomBytes(32).toString('base64url'));
    await argon2.verify(await dummyHash, password);
    return false;
  }
  return argon2.verify(hash, password);
}

let breached: ReadonlySet<string> | undefined;

/** The local list shipped with the project (no network): common breached passwords of 12+ characters. */
function breachedPasswords(): ReadonlySet<string> {
  breached ??= new Set(readFileSync(join(repoRoot, 'services/identity/breached-passwords.txt'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#')));
  return breached;
}

/** Case is ignored: "Password1234" is as guessable as "password1234". */
export function isBreachedPassword(password: string): boolean {
  return breachedPasswords().has(password.toLowerCase());
}
