import { hkdfSync } from 'node:crypto';

/** The two keys of two-factor, each derived (HKDF-SHA256) for one purpose from MFA_ENCRYPTION_KEY. */
export interface MfaKeys {
  /** AES-256-GCM key sealing TOTP secrets at rest. */
  secretKey: Buffer;
  /** HMAC-SHA256 key of recovery-code hashes. */
  recoveryCodeKey: Buffer;
}

const derived = new Map<string, MfaKeys>();

function derive(master: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `platform.mfa.${purpose}`, 32));
}

/**
 * Separate keys per purpose, so a recovery-code hash can never serve as a cipher key or the other
 * way round. Derived once per configured key (the configuration is frozen, the derivation is not free).
 */
export function mfaKeys(encryptionKeyBase64: string): MfaKeys {
  let keys = derived.get(encryptionKeyBase64);
  if (!keys) {
    const master = Buffer.from(encryptionKeyBase64, 'base64');
    if (master.length !== 32) throw new Error('MFA_ENCRYPTION_KEY must be 32 bytes in base64');
    keys = { secretKey: derive(master, 'totp-secret'), recoveryCodeKey: derive(master, 'recovery-code') };
    derived.set(encryptionKeyBase64, keys);
  }
  return keys;
}
