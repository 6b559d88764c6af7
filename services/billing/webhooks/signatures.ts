import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The providers' signature schemes (docs/reference/billing.md#rule-22), checked over the exact bytes received:
 * Stripe `Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "t.body">` (several v1 may be sent during
 * a secret rotation; one must match), Paddle `Paddle-Signature: ts=<unix>;h1=<hex HMAC-SHA256 of
 * "ts:body">`. The timestamp must lie within the tolerance either way, so a captured request cannot
 * be replayed later.
 */

export interface SignatureCheck {
  secret: string;
  toleranceSeconds: number;
  nowSeconds: number;
}

function parts(header: string, separator: string): Array<[string, string]> {
  return header.split(separator).map((part) => {
    const at = part.indexOf('=');
    return [part.slice(0, at).trim(), part.slice(at + 1).trim()];
  });
}

function hmacMatches(secret: string, signed: Buffer, given: string): boolean {
  if (!/^[0-9a-f]{64}$/i.test(given)) return false;
  const expected = createHmac('sha256', secret).update(signed).digest();
  return timingSafeEqual(expected, Buffer.from(given, 'hex'));
}

function fresh(timestamp: string | undefined, check: SignatureCheck): timestamp is string {
  if (!timestamp || !/^\d{1,12}$/.test(timestamp)) return false;
  return Math.abs(check.nowSeconds - Number(timestamp)) <= check.toleranceSeconds;
}

export function stripeSignatureValid(header: string | undefined, body: Buffer, check: SignatureCheck): boolean {
  if (!header) return false;
  const fields = parts(header, ',');
  const timestamp = fields.find(([key]) => key === 't')?.[1];
  if (!fresh(timestamp, check)) return false;
  const signed = Buffer.concat([Buffer.from(`${timestamp}.`), body]);
  return fields.some(([key, value]) => key === 'v1' && hmacMatches(check.secret, signed, value));
}

export function paddleSignatureValid(header: string | undefined, body: Buffer, check: SignatureCheck): boolean {
  if (!header) return false;
  const fields = parts(header, ';');
  const timestamp = fields.find(([key]) => key === 'ts')?.[1];
  if (!fresh(timestamp, check)) return false;
  const signed = Buffer.concat([Buffer.from(`${timestamp}:`), body]);
  return fields.some(([key, value]) => key === 'h1' && hmacMatches(check.secret, signed, value));
}
