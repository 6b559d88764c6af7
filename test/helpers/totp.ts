import { createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * RFC 6238 TOTP (HMAC-SHA1, 6 digits, 30-second steps) written on node:crypto alone, so the tests
 * check the platform's codes with an implementation independent of the otplib it uses.
 */

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function base32Decode(text: string): Buffer {
  let bits = 0;
  let value = 0;
  const bytes: number[] = [];
  for (const char of text.replace(/=+$/, '').toUpperCase()) {
    const index = BASE32.indexOf(char);
    if (index < 0) throw new Error(`not base32: ${char}`);
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(bytes);
}

/** RFC 4226 HOTP of one counter value (dynamic truncation, 6 digits). */
export function hotp(key: Buffer, counter: number): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const digest = createHmac('sha1', key).update(message).digest();
  const offset = digest[digest.length - 1] & 0x0f;
  const binary = digest.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 1_000_000).padStart(6, '0');
}

export const currentStep = (now = Date.now()): number => Math.floor(now / 1000 / 30);

export function totp(base32Secret: string, step = currentStep()): string {
  return hotp(base32Decode(base32Secret), step);
}

/**
 * An authenticator as a test uses it: each code it hands out belongs to a later time step than the
 * one before (the platform refuses a step it has accepted already) and lies within the ±1 window, so
 * up to three codes can be used within one 30-second period. A code of the previous step is handed
 * out only while more than 5 s of the current period remain, so it cannot expire in flight. When the
 * window's codes are used up (a test that starts late in a period gets only two), it waits for the
 * next period, as a person would wait for the app's next code.
 */
export class TestAuthenticator {
  private lastStep = -1;

  constructor(readonly secret: string) {}

  async nextCode(): Promise<string> {
    for (;;) {
      const nowMs = Date.now();
      const now = currentStep(nowMs);
      const secondsLeft = 30 - (nowMs / 1000) % 30;
      const earliest = secondsLeft > 5 ? now - 1 : now;
      const step = Math.max(earliest, this.lastStep + 1);
      if (step <= now + 1) {
        this.lastStep = step;
        return totp(this.secret, step);
      }
      await sleep(secondsLeft * 1000 + 100);
    }
  }

  /** The code the platform accepted last (a replay). */
  lastCode(): string {
    return totp(this.secret, this.lastStep);
  }
}
