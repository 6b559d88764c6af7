import { readFileSync } from 'node:fs';
import { Redis, type RedisOptions } from 'ioredis';
import type { Config } from './config';

export type { Redis, RedisOptions };

/**
 * Every Redis client of the platform is made here, so TLS is set in one place: a rediss:// REDIS_URL
 * connects over TLS and checks the server's certificate, its host name included, against the CA of
 * REDIS_TLS_CA_FILE (without one, against Node's built-in public CAs, as managed services need).
 * `options` are the caller's own (timeouts, offline queue, retries).
 */
export function createRedis(cfg: Config['redis'], options: RedisOptions = {}): Redis {
  if (!/^rediss:/i.test(cfg.url)) return new Redis(cfg.url, options);
  const ca = cfg.tlsCaFile ? { ca: readFileSync(cfg.tlsCaFile, 'utf8') } : {};
  return new Redis(cfg.url, { ...options, tls: { ...options.tls, ...ca } });
}
