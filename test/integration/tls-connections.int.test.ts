import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { Readable } from 'node:stream';
import { TLSSocket } from 'node:tls';
import { S3Store } from '@tus/s3-store';
import { Upload } from '@tus/server';
import { z } from 'zod';
import { config, loadConfig, type Config } from '../../common/config';
import { newId } from '../../common/ids';
import { createLogger } from '../../common/logger';
import { createObjectStore, removeObjects } from '../../common/object-store';
import { createRedis } from '../../common/redis';
import { migrate } from '../../db/migrate';
import type { DatabaseSsl } from '../../db/pg-ssl';
import { PgChannelListener } from '../../db/pg-channel-listener';
import { createDbPool, sql } from '../../db/pool';
import { TenantReader } from '../../db/tenant-reads';
import { tusS3ClientConfig } from '../../services/files/tus';
import { localTls, REDIS_TLS_PORT, startHttpsObjectStore, tcpRelay, writeUnrelatedCa, type HttpsObjectStore } from '../helpers/tls';

/**
 * The platform's own client factories over TLS to the local servers (docs/decisions/platform.md, TLS):
 * PostgreSQL with DATABASE_SSL_MODE=verify-full, Redis over rediss:// on its TLS port, and an HTTPS
 * object store, each trusting the CA the bring-up creates (scripts/infra/tls.sh). The settings go
 * through loadConfig, as a deployment's would.
 */
const base = config();
const { caFile } = localTls(base.dataDir);
const scratch = mkdtempSync(join(tmpdir(), 'tls-connections-'));
const unrelatedCa = writeUnrelatedCa(join(scratch, 'unrelated-ca.crt'));

/** The process's configuration with `change` on top, validated as at start-up. */
const configWith = (change: Record<string, string>): Readonly<Config> => loadConfig({ ...process.env, ...change });

const tlsConfig = configWith({
  DATABASE_SSL_MODE: 'verify-full', DATABASE_SSL_CA_FILE: caFile,
  REDIS_URL: `rediss://127.0.0.1:${REDIS_TLS_PORT}/0`, REDIS_TLS_CA_FILE: caFile,
});

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const sslOfSession = sql.type(z.object({ ssl: z.boolean(), version: z.string().nullable() }))`
  SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()`;

/** Whether a new slonik pool's session with `ssl` is encrypted (its pool ended either way). */
async function sessionEncrypted(url: string, ssl: DatabaseSsl): Promise<boolean> {
  const pool = await createDbPool(url, { maxPoolSize: 1, name: 'tls-test', ssl });
  try {
    return (await pool.one(sslOfSession)).ssl;
  } finally {
    await pool.end();
  }
}

describe('PostgreSQL with DATABASE_SSL_MODE=verify-full', () => {
  it('is what the configuration gives every connection path', () => {
    expect(tlsConfig.db.ssl).toEqual({ mode: 'verify-full', caFile });
  });

  it('encrypts the slonik pool, the pipelined reads and the LISTEN connection', async () => {
    const { url } = tlsConfig.db;
    const ssl = tlsConfig.db.ssl;
    const pool = await createDbPool(url, { maxPoolSize: 1, name: 'tls-test', ssl });
    const reader = await TenantReader.open(url, pool, 1, ssl);
    const applicationName = `tls-test-${newId()}`;
    const channel = `tls_test_${newId().replace(/-/g, '')}`;
    let listening!: () => void;
    const isListening = new Promise<void>((resolve) => { listening = resolve; });
    const notified: string[] = [];
    const listener = new PgChannelListener(
      { url, name: 'tls-test', applicationName, timeoutMs: 5000, ssl },
      { [channel]: { listening, lost: () => undefined, notified: (payload) => notified.push(payload) } },
      createLogger('tls-test', 'silent'),
    );
    try {
      expect(await pool.one(sslOfSession)).toEqual({ ssl: true, version: expect.stringMatching(/^TLSv1\.[23]$/) });
      expect(await reader.together(sslOfSession)).toEqual([expect.objectContaining({ ssl: true })]);

      listener.start();
      await isListening;
      const listenerSession = await pool.one(sql.type(z.object({ ssl: z.boolean() }))`
        SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.application_name = ${applicationName}`);
      expect(listenerSession.ssl).toBe(true);
      await pool.query(sql.unsafe`SELECT pg_notify(${channel}, 'over tls')`);
      for (let waited = 0; notified.length === 0 && waited < 5000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(notified).toEqual(['over tls']);
    } finally {
      await listener.stop();
      await reader.end();
      await pool.end();
    }
  });

  it('runs the migration runner over it', async () => {
    await expect(migrate({ databaseUrl: tlsConfig.db.ownerUrl, write: () => undefined, ssl: tlsConfig.db.ssl }))
      .resolves.toEqual({ applied: expect.any(Array) });
  });

  it('refuses a server whose certificate another CA signed', async () => {
    await expect(sessionEncrypted(tlsConfig.db.url, { mode: 'verify-full', caFile: unrelatedCa }))
      .rejects.toThrow(/certificate/);
  });

  it('checks the host name, which verify-ca does not', async () => {
    const target = new URL(tlsConfig.db.url);
    const relay = await tcpRelay({ host: target.hostname, port: Number(target.port || 5432) });
    try {
      // The same server dialled as 127.0.0.2, a name its certificate (127.0.0.1, localhost) does not carry.
      const elsewhere = new URL(tlsConfig.db.url);
      elsewhere.hostname = relay.host;
      elsewhere.port = String(relay.port);
      await expect(sessionEncrypted(elsewhere.toString(), { mode: 'verify-full', caFile }))
        .rejects.toThrow(/Hostname\/IP does not match certificate's altnames/);
      await expect(sessionEncrypted(elsewhere.toString(), { mode: 'verify-ca', caFile })).resolves.toBe(true);
    } finally {
      await relay.close();
    }
  });
});

describe('Redis over rediss:// with REDIS_TLS_CA_FILE', () => {
  it('answers PING, SET and GET on a verified TLS connection', async () => {
    const redis = createRedis(tlsConfig.redis, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
    const key = `tls-test:${newId()}`;
    try {
      await redis.connect();
      expect(redis.stream).toBeInstanceOf(TLSSocket);
      expect((redis.stream as TLSSocket).authorized).toBe(true);
      expect(await redis.ping()).toBe('PONG');
      await redis.set(key, 'over tls', 'EX', 60);
      expect(await redis.get(key)).toBe('over tls');
      await redis.del(key);
    } finally {
      await redis.quit();
    }
  });

  it('refuses a server whose certificate another CA signed', async () => {
    const redis = createRedis({ ...tlsConfig.redis, tlsCaFile: unrelatedCa }, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    // ioredis reports the handshake's failure as an 'error' event; connect() then fails with "Connection is closed".
    const errors: Error[] = [];
    redis.on('error', (error: Error) => errors.push(error));
    try {
      await expect(redis.connect()).rejects.toThrow();
      expect(errors).toEqual([expect.objectContaining({ message: expect.stringMatching(/certificate/) })]);
    } finally {
      redis.disconnect();
    }
  });
});

describe('the object store over HTTPS with S3_CA_FILE', () => {
  let store: HttpsObjectStore;
  let s3: Config['s3'];

  beforeAll(async () => {
    store = await startHttpsObjectStore(base.dataDir, base.s3);
    s3 = configWith({ S3_USE_SSL: 'true', S3_ENDPOINT: '127.0.0.1', S3_PORT: String(store.port), S3_CA_FILE: caFile }).s3;
  }, 30_000);
  afterAll(() => store?.stop());

  it('puts and gets an object through the minio client of createObjectStore', async () => {
    const objects = createObjectStore(s3);
    const key = `tls-connections-test/${newId()}`;
    try {
      await objects.s3.putObject(objects.bucket, key, Buffer.from('over https'));
      expect((await buffer(await objects.s3.getObject(objects.bucket, key))).toString()).toBe('over https');
    } finally {
      await removeObjects(objects, [key]);
    }
  });

  it('uploads through the tus store\'s own client (the AWS SDK) with the same TLS', async () => {
    const datastore = new S3Store({ s3ClientConfig: tusS3ClientConfig(s3, s3.bucket), useTags: false });
    const id = `tls-connections-test/${newId()}`;
    const bytes = Buffer.from('a tus upload over https');
    try {
      await datastore.create(new Upload({ id, size: bytes.length, offset: 0 }));
      expect(await datastore.write(Readable.from([bytes]), id, 0)).toBe(bytes.length);
      expect(await buffer(await datastore.read(id))).toEqual(bytes);
    } finally {
      await removeObjects(createObjectStore(s3), [id, `${id}.info`]);
    }
  });

  it('refuses a store whose certificate another CA signed', async () => {
    const objects = createObjectStore({ ...s3, caFile: unrelatedCa });
    await expect(objects.s3.bucketExists(objects.bucket)).rejects.toThrow(/certificate/);
  });
});
