import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Refresh tokens are opaque: 32 random bytes in base64url. The database keeps only their SHA-256,
 * so a copy of it cannot be replayed.
 */
export function newRefreshToken(): string {
  return randomBytes(32).toString('base64url');
}

export function hashRefreshToken(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/**
 * The pair issued when a token was rotated is kept for the grace window, encrypted (AES-256-GCM)
 * under a key derived from the rotated token itself. A duplicate request presenting that token can
 * open it and gets the identical pair; the stored hash alone cannot (HKDF and SHA-256 of the token
 * are unrelated values). Layout: 12-byte nonce, 16-byte tag, ciphertext.
 */
function successorKey(token: string): Buffer {
  return Buffer.from(hkdfSync('sha256', token, Buffer.alloc(0), 'platform.refresh-token.successor', 32));
}

export function sealSuccessor(token: string, value: unknown): Buffer {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', successorKey(token), nonce);
  const sealed = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  return Buffer.concat([nonce, cipher.getAuthTag(), sealed]);
}

export function openSuccessor<T>(token: string, sealed: Buffer): T {
  const decipher = createDecipheriv('aes-256-gcm', successorKey(token), sealed.subarray(0, 12));
  decipher.setAuthTag(sealed.subarray(12, 28));
  const plain = Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]);
  return JSON.parse(plain.toString('utf8')) as T;
}
