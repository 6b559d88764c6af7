import { hkdfSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import argon2 from 'argon2';
import { repoRoot } from '../../common/paths';

/** Minimum 12 characters (docs/reference/identity.md#rule-3). The maximum only bounds the hashing work one request can cause. */
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 256;

/**
 * Argon2id with the OWASP minimum (19 MiB, 2 passes, 1 lane): about 20 ms per hash here, which
 * sets the ceiling of logins per second per core (bench/identity.bench.ts measures both).
 */
export const ARGON2_OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/**
 * Every hash is made with a pepper: argon2's secret, a key that lives in the configuration
 * (PASSWORD_PEPPER), never in the database, so a copy of the users table alone cannot be guessed
 * against (ASVS 2.4.5). A hash records that it is peppered in its own PHC string, as argon2's
 * associated data (`data=` among the parameters): hashes made before the pepper carry none, still
 * verify without it, and are made again at the next sign-in (docs/decisions/identity.md, "Password
 * pepper"). The value names the pepper's version, so a second pepper could be told from this one.
 */
const PEPPERED = Buffer.from('pepper:1');
/** PHC strings carry base64 without padding. */
const PEPPERED_PARAMETER = `data=${PEPPERED.toString('base64').replace(/=+$/, '')}`;

const pepperKeys = new Map<string, Buffer>();

/**
 * The secret derived (HKDF-SHA256, purpose `platform.password.pepper`) from PASSWORD_PEPPER, so the
 * same 32 bytes configured for another purpose by mistake would still give another key. Derived once
 * per configured value.
 */
function pepperKey(pepperBase64: string): Buffer {
  let key = pepperKeys.get(pepperBase64);
  if (!key) {
    const master = Buffer.from(pepperBase64, 'base64');
    if (master.length !== 32) throw new Error('PASSWORD_PEPPER must be 32 bytes in base64');
    key = Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), 'platform.password.pepper', 32));
    pepperKeys.set(pepperBase64, key);
  }
  return key;
}

/** Whether a stored hash was made with the pepper: `$argon2id$v=19$m=…,p=…,t=…,data=…$salt$hash`. */
function isPeppered(hash: string): boolean {
  return hash.split('$')[3]?.split(',').includes(PEPPERED_PARAMETER) ?? false;
}

/** `pepper` is PASSWORD_PEPPER as configured (config.identity.passwordPepper), here and below. */
export function hashPassword(pepper: string, password: string): Promise<string> {
  return argon2.hash(password, { ...ARGON2_OPTIONS, secret: pepperKey(pepper), associatedData: PEPPERED });
}

/**
 * A hash of a password nobody knows, verified when the e-mail of a login is unknown, so an unknown
 * account costs the same time as a wrong password and the timing tells nothing.
 */
let dummyHash: Promise<string> | undefined;

/**
 * Verifies `password` against `hash` (with the pepper when the hash is peppered), or against the
 * dummy hash when there is none (unknown account, or an account without a password); false in
 * those cases whatever the password.
 */
export async function verifyPassword(pepper: string, hash: string | null | undefined, password: string): Promise<boolean> {
  if (!hash) {
    dummyHash ??= hashPassword(pepper, randomBytes(32).toString('base64url'));
    await argon2.verify(await dummyHash, password, { secret: pepperKey(pepper) });
    return false;
  }
  return argon2.verify(hash, password, isPeppered(hash) ? { secret: pepperKey(pepper) } : {});
}

/**
 * Whether a hash that has just verified should be made again now that the password is known: it
 * has no pepper, or other parameters than ARGON2_OPTIONS (argon2's own needsRehash, which knows
 * nothing of secrets).
 */
export function passwordNeedsRehash(hash: string): boolean {
  return !isPeppered(hash) || argon2.needsRehash(hash, ARGON2_OPTIONS);
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
