import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';
import { v7 as uuidv7, validate as uuidValidate, version as uuidVersion } from 'uuid';

/** A UUID of version 4 or 7, the forms the API accepts for ids and idempotency keys (docs/reference/conventions.md, rules 4 and 20). */
export function isUuid(value: string): boolean {
  return uuidValidate(value) && [4, 7].includes(uuidVersion(value));
}

const nextUlid = monotonicFactory();

/**
 * Wallet ids are ULIDs (docs/reference/conventions.md#rule-4): time-ordered like UUID v7, and monotonic within a process so
 * wallets created in the same millisecond still sort (and lock, for transfers) in creation order.
 */
export function newWalletId(): string {
  return nextUlid();
}

/**
 * Ids, trace and span ids are minted on every request; their random bytes are cut from a pooled
 * buffer refilled 4 KiB at a time (as Node does for randomUUID), instead of one call into the
 * random source per id.
 */
const randomPool = Buffer.alloc(4096);
let poolOffset = randomPool.length;

/** The next `bytes` of the pool, refilled when it runs out; a view, read before the next refill. */
function randomBytesFromPool(bytes: number): Buffer {
  if (poolOffset + bytes > randomPool.length) {
    randomFillSync(randomPool);
    poolOffset = 0;
  }
  const view = randomPool.subarray(poolOffset, poolOffset + bytes);
  poolOffset += bytes;
  return view;
}

function randomHex(bytes: number): string {
  return randomBytesFromPool(bytes).toString('hex');
}

/**
 * Where the last id stood: its millisecond and the 31-bit counter that orders ids minted within one
 * millisecond (RFC 9562 method 1, as uuid keeps it when it draws its own random bytes).
 */
const v7Clock = { msecs: Number.NEGATIVE_INFINITY, seq: 0 };

/**
 * Identifiers are UUID v7: time-ordered, so primary-key indexes stay append-mostly, and monotonic
 * within the process. Their random bytes come from the pooled buffer above: uuid draws 16 bytes
 * from crypto.getRandomValues for every id, about 8 µs each, a sixth of the gateway's CPU per event
 * of a gRPC BatchPublish (bench/events.bench.ts, profiled). Given its bytes, uuid keeps no clock of
 * its own, so the millisecond and counter are kept here, as it would.
 */
export function newId(): string {
  const random = randomBytesFromPool(16);
  const now = Date.now();
  if (now > v7Clock.msecs) {
    v7Clock.msecs = now;
    // A fresh millisecond starts the counter at random, leaving room to count up (bytes 6 to 9, top bit clear).
    v7Clock.seq = ((random[6] & 0x7f) << 24) | (random[7] << 16) | (random[8] << 8) | random[9];
  } else {
    v7Clock.seq = (v7Clock.seq + 1) | 0;
    // The counter wrapped: the next millisecond takes over, so ids keep their order.
    if (v7Clock.seq === 0) v7Clock.msecs += 1;
  }
  return uuidv7({ random, msecs: v7Clock.msecs, seq: v7Clock.seq });
}

/** W3C trace ids are 16 random bytes in hex; span ids 8. */
export function newTraceId(): string {
  return randomHex(16);
}

export function newSpanId(): string {
  return randomHex(8);
}
