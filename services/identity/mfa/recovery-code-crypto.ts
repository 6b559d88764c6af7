import { createHmac, randomBytes } from 'node:crypto';

/** 10 recovery codes per user (docs/reference/identity.md#rule-20). */
export const RECOVERY_CODE_COUNT = 10;

/**
 * 32 symbols (5 bits each, so one random byte masked to 5 bits picks one without bias): digits and
 * lower-case letters without i, l, o and u, which are read or typed wrongly. 12 symbols = 60 bits.
 */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const CODE_LENGTH = 12;

function newRecoveryCode(): string {
  return [...randomBytes(CODE_LENGTH)].map((byte) => ALPHABET[byte & 31]).join('');
}

export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
}

/** What users type: any case, with spaces or hyphens where they grouped the code. */
export function normalizeRecoveryCode(input: string): string {
  return input.toLowerCase().replace(/[\s-]/g, '');
}

/**
 * The stored form: HMAC-SHA256 under a server key, bound to the account. Deterministic, so a code is
 * found by an indexed equality lookup; keyed, so a stolen table cannot be searched offline.
 */
export function hashRecoveryCode(key: Buffer, userId: string, code: string): Buffer {
  return createHmac('sha256', key).update(`${userId}:${normalizeRecoveryCode(code)}`).digest();
}
