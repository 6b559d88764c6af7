import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * The shape of an API key: `plat_`, a random body of BODY_LENGTH base62 characters and a checksum of
 * CHECKSUM_LENGTH base62 characters (the CRC32 of the body), with no dot. The fixed prefix lets a
 * secret scanner find a leaked key; the checksum lets the gateway refuse a mistyped or made-up key
 * without reading the database; and without a dot a key is never mistaken for a JWT (three dotted parts).
 */
export const API_KEY_PREFIX = 'plat_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 32 base62 characters: about 190 random bits, far beyond guessing even against the stored hash. */
const BODY_LENGTH = 32;
/** 62^6 > 2^32: every CRC32 value has its own six characters. */
const CHECKSUM_LENGTH = 6;
/** How much of the body the visible prefix shows (api_keys.prefix). */
const VISIBLE_BODY = 8;

const SHAPE = new RegExp(`^${API_KEY_PREFIX}([0-9A-Za-z]{${BODY_LENGTH}})([0-9A-Za-z]{${CHECKSUM_LENGTH}})$`);

/** A key as made: the secret shown once, its visible prefix and the hash stored in its place. */
export interface NewApiKeySecret {
  key: string;
  prefix: string;
  hash: Buffer;
}

/** Fixed-width base62 of a 32-bit checksum. */
function checksumOf(body: string): string {
  let value = crc32(body);
  let text = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i += 1) {
    text = ALPHABET[value % 62] + text;
    value = Math.floor(value / 62);
  }
  return text;
}

/** Uniform base62 characters: bytes of 248 and above are dropped, so no character is likelier than another. */
function randomBase62(length: number): string {
  let text = '';
  while (text.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && text.length < length) text += ALPHABET[byte % 62];
    }
  }
  return text;
}

/** The stored form of a key: SHA-256 of the whole key (see migration 0038 for why a fast hash suffices). */
export function apiKeyHash(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

export function newApiKeySecret(): NewApiKeySecret {
  const body = randomBase62(BODY_LENGTH);
  const key = `${API_KEY_PREFIX}${body}${checksumOf(body)}`;
  return { key, prefix: `${API_KEY_PREFIX}${body.slice(0, VISIBLE_BODY)}`, hash: apiKeyHash(key) };
}

/** Whether a value starts as our keys do: such a value is an API key or nothing (never a JWT). */
export function looksLikeApiKey(value: string): boolean {
  return value.startsWith(API_KEY_PREFIX);
}

/** Whether a value has the shape of a key and its checksum matches its body; checked before any lookup. */
export function isWellFormedApiKey(value: string): boolean {
  const match = SHAPE.exec(value);
  return match !== null && checksumOf(match[1]) === match[2];
}
