import { LRUCache } from 'lru-cache';
import type { ChannelSubscriber } from '../../db/pg-channel-listener';
import type { DatabasePool } from '../../db/pool';
import type { Logger } from '../../common/logger';
import { problems } from '../../common/problems';
import { apiKeyHash, isWellFormedApiKey } from '../../services/identity/api-key-format';
import { liveApiKeyForSecret, noteApiKeyUse } from '../../services/identity/api-keys';

/** A live key as the gateway acts for it. */
export interface VerifiedApiKey {
  id: string;
  tenantId: string;
  permissions: readonly string[];
  /** Epoch ms, or null for a key that never expires. */
  expiresAt: number | null;
}

export interface VerifiedApiKeysOptions {
  db: DatabasePool;
  /** The most keys kept (LRU); past it the least recently used is dropped. */
  maxEntries: number;
  /** How long a key may be reused while nothing about it is announced (0: never). */
  ttlMs: number;
  logger: Logger;
  now?: () => number;
}

/** lastUsedAt is written at most this often per key (the database checks it again across gateways). */
const TOUCH_EVERY_MS = 60_000;

/**
 * The API keys this gateway has verified, by the SHA-256 of the secret (the secret itself is not
 * kept), so a service calling with the same key pays one database read, not one per request.
 * Correct only while PostgreSQL's announcements are heard (migration 0038, channel api_key_changes,
 * through the gateway's PgChannelListener): a key is kept only while listening, and dropped when its
 * id is announced, so a revocation through any gateway refuses the key here as soon as the
 * notification arrives (well within a second). Outside listening nothing is kept and every request
 * reads; the TTL bounds reuse regardless. A read that raced an announcement (the generation moved
 * while it ran) is answered but not kept, as in MeCache. Expiry is checked on every use, cached or
 * not. Malformed keys and keys whose checksum fails are refused before any of this.
 */
export class VerifiedApiKeys implements ChannelSubscriber {
  private readonly keys: LRUCache<string, VerifiedApiKey>;
  /** When this gateway last wrote each key's last_used_at (epoch ms), by key id. */
  private readonly touched: LRUCache<string, number>;
  private isListening = false;
  private generation = 0;
  private readonly now: () => number;
  readonly stats = { hits: 0, misses: 0, announcements: 0 };

  constructor(private readonly options: VerifiedApiKeysOptions) {
    this.now = options.now ?? Date.now;
    this.keys = new LRUCache({ max: options.maxEntries, ttl: Math.max(1, options.ttlMs), ttlAutopurge: false });
    this.touched = new LRUCache({ max: options.maxEntries });
  }

  /** The live key a secret names, or 401: malformed, unknown, revoked or expired. */
  async verify(secret: string): Promise<VerifiedApiKey> {
    if (!isWellFormedApiKey(secret)) throw problems.unauthorized('The API key is malformed');
    const hash = apiKeyHash(secret).toString('base64');
    let key = this.isListening && this.options.ttlMs > 0 ? this.keys.get(hash) : undefined;
    if (key) this.stats.hits += 1;
    else key = await this.load(hash);
    if (key.expiresAt !== null && key.expiresAt <= this.now()) throw problems.unauthorized('The API key has expired');
    this.noteUse(key);
    return key;
  }

  listening(): void {
    this.startOver(true);
  }

  lost(): void {
    this.startOver(false);
  }

  /** The id of a key that changed (revoked, its expiry or permissions changed). */
  notified(keyId: string): void {
    if (!this.isListening) return;
    this.stats.announcements += 1;
    this.forget(keyId);
  }

  /** Drops a key, found by its id; the next request with it reads again. */
  forget(keyId: string): void {
    this.generation += 1;
    for (const [hash, key] of this.keys.entries()) {
      if (key.id === keyId) this.keys.delete(hash);
    }
  }

  private async load(hash: string): Promise<VerifiedApiKey> {
    this.stats.misses += 1;
    const generation = this.generation;
    const row = await liveApiKeyForSecret(this.options.db, Buffer.from(hash, 'base64'));
    if (!row) throw problems.unauthorized('The API key is not valid');
    const key = { id: row.id, tenantId: row.tenantId, permissions: row.permissions, expiresAt: row.expiresAt === null ? null : Date.parse(row.expiresAt) };
    if (this.isListening && generation === this.generation) this.keys.set(hash, key);
    return key;
  }

  /**
   * Writes the key's last_used_at once a minute from this gateway, without the request waiting for
   * it; the statement itself skips a key written within the minute by any gateway. A failed write
   * costs only the timestamp.
   */
  private noteUse(key: VerifiedApiKey): void {
    const now = this.now();
    const last = this.touched.get(key.id);
    if (last !== undefined && now - last < TOUCH_EVERY_MS) return;
    this.touched.set(key.id, now);
    noteApiKeyUse(this.options.db, key.tenantId, key.id)
      .catch((error: unknown) => this.options.logger.warn({ err: error, keyId: key.id }, 'API key last use not written'));
  }

  private startOver(listening: boolean): void {
    this.isListening = listening;
    this.keys.clear();
    this.generation += 1;
  }
}
