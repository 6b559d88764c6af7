import { generateSecret, generateURI, verify } from 'otplib';
import QRCode from 'qrcode';

/** RFC 6238 as authenticator apps expect it: HMAC-SHA1, 6 digits, 30-second steps (also in migration 0005). */
export const TOTP_PERIOD_SECONDS = 30;

/** ±1 step: a code of the previous or the next period is still accepted (clock drift, typing time). */
const TOLERANCE_SECONDS = TOTP_PERIOD_SECONDS;

/** A new shared secret: 20 random bytes (160 bits, RFC 4226's recommendation) in base32. */
export function newTotpSecret(): string {
  return generateSecret({ length: 20 });
}

export interface Provisioning {
  secret: string;
  otpauthUrl: string;
  /** The otpauth URL as a PNG QR code in a data URL. */
  qrCode: string;
}

export async function provisioning(issuer: string, accountName: string, secret: string): Promise<Provisioning> {
  const otpauthUrl = generateURI({ issuer, label: accountName, secret });
  return { secret, otpauthUrl, qrCode: await QRCode.toDataURL(otpauthUrl) };
}

/**
 * The time step the code belongs to, or null when it matches no step of the window or only steps
 * at or before `afterStep` (the last accepted one): RFC 6238 section 5.2 forbids accepting a code
 * again once it was accepted. Claiming the returned step (auth_mfa_claim_step) completes the check.
 */
export async function matchTotp(secret: string, code: string, afterStep: number | null, now = Date.now()): Promise<number | null> {
  const epoch = Math.floor(now / 1000);
  const lastStepInWindow = Math.floor((epoch + TOLERANCE_SECONDS) / TOTP_PERIOD_SECONDS);
  // otplib refuses an afterTimeStep beyond its window; then every code of the window is used up.
  if (afterStep !== null && afterStep >= lastStepInWindow) return null;
  const result = await verify({
    secret, token: code, epoch, epochTolerance: TOLERANCE_SECONDS, afterTimeStep: afterStep ?? undefined,
  });
  // The functional API's result type also covers HOTP, which has no time step.
  return result.valid && 'timeStep' in result ? result.timeStep : null;
}
