import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * TOTP secrets at rest: AES-256-GCM under the derived secret key, with the account id as associated
 * data, so a sealed secret copied onto another account does not open. Layout: format byte (1, so a
 * later key rotation can add a key id), 12-byte nonce, 16-byte tag, ciphertext.
 */
const FORMAT = 1;
const aad = (userId: string) => Buffer.from(`platform.mfa.secret:${userId}`, 'utf8');

export function sealTotpSecret(key: Buffer, userId: string, secret: string): Buffer {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(aad(userId));
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return Buffer.concat([Buffer.from([FORMAT]), nonce, cipher.getAuthTag(), sealed]);
}

/** Throws when the value was not sealed for this account under this key (tampered, moved, other key). */
export function openTotpSecret(key: Buffer, userId: string, sealed: Buffer): string {
  if (sealed[0] !== FORMAT) throw new Error(`unknown sealed TOTP secret format ${sealed[0]}`);
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(1, 13));
  decipher.setAAD(aad(userId));
  decipher.setAuthTag(sealed.subarray(13, 29));
  return Buffer.concat([decipher.update(sealed.subarray(29)), decipher.final()]).toString('utf8');
}
