import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';
import { v7 as uuidv7, validate as uuidValidate, version as uuidVersion } from 'uuid';

/** Identifiers are UUID v7: time-ordered, so primary-key indexes stay append-mostly. */
export function newId(): string {
  return uuidv7();
}

/** A UUID of version 4 or 7, the forms the documents accept for ids and idempotency keys. */
export function isUuid(value: string): boolean {
  return uuidValidate(value) && [4, 7].includes(uuidVersion(value));
}

const nextUlid = monotonicFactory();

/**
 * Wallet ids are ULIDs (document 2): time-ordered like UUID v7, and monotonic within a process so
 * wallets created in the same millisecond still sort (and lock, for transfers) in creation order.
 */
export function newWalletId(): string {
  return nextUlid();
}

/**
 * Trace and span ids are minted on every request; they are cut from a pooled buffer refilled 4 KiB
 * at a time (as Node does for randomUUID), instead of one call into the random source per id.
 */
const randomPool = Buffer.alloc(4096);
let poolOffset = randomPool.length;

function randomHex(bytes: number): string {
  if (poolOffset + bytes > randomPool.length) {
    randomFillSync(randomPool);
    poolOffset = 0;
  }
  const hex = randomPool.toString('hex', poolOffset, poolOffset + bytes);
  poolOffset += bytes;
  return hex;
}

/** W3C trace ids are 16 random bytes in hex; span ids 8. */
export function newTraceId(): string {
  return randomHex(16);
}

export function newSpanId(): string {
  return randomHex(8);
}
