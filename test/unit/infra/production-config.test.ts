import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rootCertificates } from 'node:tls';
import { ConfigError, loadConfig } from '../../../common/config';
import { LOCAL_KAFKA_SASL } from '../../../common/config/events';
import { productionEnvironment } from '../../helpers/production-config';

/**
 * NODE_ENV=production refuses what is fine on a laptop and unsafe on a server (common/config/production.ts),
 * and every environment refuses TLS settings that contradict each other (common/config/db.ts, files.ts).
 * Each row changes one variable of an environment production accepts; the refusal must name it.
 */
const dir = mkdtempSync(join(tmpdir(), 'production-config-'));
const caFile = join(dir, 'ca.crt');
writeFileSync(caFile, rootCertificates[0]);
const keyFile = join(dir, 'signing-keys.json');
writeFileSync(keyFile, '{"keys": []}');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A self-signed certificate and its key (a client certificate's files), as openssl writes them. */
function certificatePair(name: string): { cert: string; key: string } {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
    '-keyout', key, '-out', cert, '-days', '1', '-subj', `/CN=${name}`], { stdio: 'ignore' });
  return { cert, key };
}
const client = certificatePair('client');
const other = certificatePair('other');
const kafkaScram = { KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_SASL_USERNAME: 'svc-platform', KAFKA_SASL_PASSWORD: 'a-secret-of-its-own' };

const DEV_MFA_KEY = loadConfig({}).identity.mfa.encryptionKey;
const load = (change: Record<string, string | undefined>) => loadConfig({ ...productionEnvironment(), ...change });

/** The message of the ConfigError `load(change)` throws. */
function refusal(change: Record<string, string | undefined>): string {
  try {
    load(change);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(change)}`);
}

describe('production mode', () => {
  it('accepts an environment whose secrets are its own, with or without TLS', () => {
    expect(load({}).env).toBe('production');
    const tls = load({
      DATABASE_SSL_MODE: 'verify-full', DATABASE_SSL_CA_FILE: caFile,
      REDIS_URL: 'rediss://redis.internal:6380/0', REDIS_TLS_CA_FILE: caFile,
      S3_USE_SSL: 'true', S3_CA_FILE: caFile, S3_PATH_STYLE: 'false',
    });
    expect(tls.db.ssl).toEqual({ mode: 'verify-full', caFile });
    expect(tls.redis.tlsCaFile).toBe(caFile);
    expect(tls.s3).toMatchObject({ useSSL: true, caFile, pathStyle: false });
    // TLS is not required (docs/decisions/platform.md, Production mode): a private network may do without.
    expect(load({ DATABASE_SSL_MODE: 'require' }).db.ssl).toEqual({ mode: 'require' });
  });

  it('accepts Kafka over SASL_SSL and Temporal over mTLS or with an API key', () => {
    const kafka = load({ KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: caFile, ...kafkaScram }).kafka;
    expect(kafka).toMatchObject({ ssl: true, sslCaFile: caFile, sasl: { mechanism: 'scram-sha-512', username: 'svc-platform', password: 'a-secret-of-its-own' } });
    // SCRAM never sends the password: allowed without TLS, as TLS is not required.
    expect(load(kafkaScram).kafka.ssl).toBe(false);
    expect(load({ KAFKA_SSL: 'true' }).kafka).toMatchObject({ ssl: true, sasl: {} });
    const mtls = load({
      TEMPORAL_NAMESPACE: 'platform-prod', TEMPORAL_TLS_CERT_FILE: client.cert, TEMPORAL_TLS_KEY_FILE: client.key,
      TEMPORAL_TLS_CA_FILE: caFile, TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
    }).temporal;
    expect(mtls).toMatchObject({ namespace: 'platform-prod', tls: { certFile: client.cert, keyFile: client.key, caFile, serverName: 'temporal.internal' } });
    expect(load({ TEMPORAL_API_KEY: 'key-of-the-namespace' }).temporal).toMatchObject({ apiKey: 'key-of-the-namespace', tls: {} });
  });

  it('accepts a key file that exists in place of a key', () => {
    expect(load({ JWT_PRIVATE_KEY: undefined, JWT_KEY_FILE: keyFile }).identity.jwt.keyFile).toBe(keyFile);
    expect(load({ TEMPORAL_PAYLOAD_KEY: undefined, TEMPORAL_PAYLOAD_KEY_FILE: keyFile }).temporalCodec.keyFile).toBe(keyFile);
  });

  it.each([
    ['DATABASE_URL', { DATABASE_URL: 'postgres://platform_app:platform_app@db.internal:5432/platform' }, 'password of a development role'],
    ['DATABASE_OWNER_URL', { DATABASE_OWNER_URL: 'postgres://platform_owner:platform_owner@db.internal/platform' }, 'password of a development role'],
    // Another role's development password is as public as the role's own.
    ['ANALYTICS_DATABASE_URL', { ANALYTICS_DATABASE_URL: 'postgres://reader:platform_owner@replica.internal/platform' }, 'password of a development role'],
    ['S3_ACCESS_KEY', { S3_ACCESS_KEY: 'platform' }, 'public development value'],
    ['S3_SECRET_KEY', { S3_SECRET_KEY: undefined }, 'public development value'],
    ['BILLING_STRIPE_WEBHOOK_SECRET', { BILLING_STRIPE_WEBHOOK_SECRET: 'whsec_local_stripe_secret' }, 'public development value'],
    ['BILLING_PADDLE_WEBHOOK_SECRET', { BILLING_PADDLE_WEBHOOK_SECRET: undefined }, 'public development value'],
    ['MFA_ENCRYPTION_KEY', { MFA_ENCRYPTION_KEY: DEV_MFA_KEY }, 'public development value'],
    ['PASSWORD_PEPPER', { PASSWORD_PEPPER: undefined }, 'public development value'],
    ['JWT_PRIVATE_KEY', { JWT_PRIVATE_KEY: undefined }, 'would generate a key of its own'],
    ['JWT_KEY_FILE', { JWT_PRIVATE_KEY: undefined, JWT_KEY_FILE: join(dir, 'missing.json') }, 'does not exist'],
    ['TEMPORAL_PAYLOAD_KEY', { TEMPORAL_PAYLOAD_KEY: undefined }, 'would generate a key of its own'],
    ['TEMPORAL_PAYLOAD_KEY_FILE', { TEMPORAL_PAYLOAD_KEY: undefined, TEMPORAL_PAYLOAD_KEY_FILE: join(dir, 'missing.json') }, 'does not exist'],
    ['RESPONSE_VALIDATION', { RESPONSE_VALIDATION: 'on' }, 'for development, test and staging'],
    ['KAFKA_SASL_PASSWORD', { ...kafkaScram, KAFKA_SASL_PASSWORD: LOCAL_KAFKA_SASL.password }, 'password of the local broker\'s SCRAM user'],
    // PLAIN sends the password itself: in clear without TLS.
    ['KAFKA_SASL_MECHANISM', { ...kafkaScram, KAFKA_SASL_MECHANISM: 'plain' }, 'plain without KAFKA_SSL'],
    ['AUTH_PROVIDERS', {
      AUTH_PROVIDERS: JSON.stringify([{ id: 'acme', name: 'Acme', issuer: 'http://sso.acme.example', clientId: 'c', redirectUri: 'https://app.example/cb' }]),
    }, 'http:// issuer or redirect URI'],
  ])('refuses %s', (variable, change, reason) => {
    const message = refusal(change);
    expect(message).toMatch(/^Refusing to start with NODE_ENV=production:\n/);
    // Only the changed variable: the others of the environment are production's own.
    expect(message.split('\n').slice(1)).toEqual([expect.stringMatching(new RegExp(`^ {2}${variable}: .*${reason}`))]);
  });

  it('names every refused variable at once', () => {
    const message = refusal({ S3_SECRET_KEY: undefined, RESPONSE_VALIDATION: 'on', JWT_PRIVATE_KEY: undefined });
    expect(message.split('\n').slice(1).map((line) => line.trim().split(':')[0])).toEqual(['S3_SECRET_KEY', 'JWT_PRIVATE_KEY', 'RESPONSE_VALIDATION']);
  });

  it('leaves development and test alone', () => {
    expect(loadConfig({}).s3.secretKey).toBe('platform-secret');
    expect(loadConfig({ NODE_ENV: 'test', RESPONSE_VALIDATION: 'on' }).api.validateResponses).toBe(true);
  });
});

describe('TLS settings, in every environment', () => {
  it.each([
    ['DATABASE_SSL_CA_FILE', { DATABASE_SSL_MODE: 'verify-full' }, 'is required with DATABASE_SSL_MODE=verify-ca or verify-full'],
    ['DATABASE_SSL_CA_FILE', { DATABASE_SSL_MODE: 'verify-ca' }, 'is required with DATABASE_SSL_MODE=verify-ca or verify-full'],
    // require checks no certificate: a CA file beside it would only look like it did.
    ['DATABASE_SSL_CA_FILE', { DATABASE_SSL_MODE: 'require', DATABASE_SSL_CA_FILE: caFile }, 'is only read with DATABASE_SSL_MODE=verify-ca or verify-full'],
    ['DATABASE_SSL_CA_FILE', { DATABASE_SSL_MODE: 'verify-full', DATABASE_SSL_CA_FILE: join(dir, 'missing.crt') }, 'cannot be read \\(ENOENT'],
    ['DATABASE_SSL_CA_FILE', { DATABASE_SSL_MODE: 'verify-full', DATABASE_SSL_CA_FILE: keyFile }, 'holds no PEM certificate'],
    ['DATABASE_SSL_MODE', { DATABASE_SSL_MODE: 'prefer' }, 'must be one of'],
    // node-postgres would let the URL's sslmode override DATABASE_SSL_MODE (and read require as verify-full).
    ['DATABASE_URL', { DATABASE_URL: 'postgres://a:b@db.internal/platform?sslmode=require' }, 'must not set sslmode'],
    ['ANALYTICS_DATABASE_URL', { ANALYTICS_DATABASE_URL: 'postgres://a:b@db.internal/platform?sslrootcert=/ca.crt' }, 'must not set sslrootcert'],
    ['REDIS_TLS_CA_FILE', { REDIS_URL: 'redis://redis.internal:6379/0', REDIS_TLS_CA_FILE: caFile }, 'is only read with a rediss:// REDIS_URL'],
    ['S3_CA_FILE', { S3_CA_FILE: caFile }, 'is only read with S3_USE_SSL=true'],
    ['KAFKA_SSL_CA_FILE', { KAFKA_SSL_CA_FILE: caFile }, 'is only read with KAFKA_SSL=true'],
    ['KAFKA_SSL_CA_FILE', { KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: keyFile }, 'holds no PEM certificate'],
    ['KAFKA_SASL_MECHANISM', { ...kafkaScram, KAFKA_SASL_MECHANISM: 'gssapi' }, 'must be one of \\[scram-sha-256, scram-sha-512, plain\\]'],
    ['KAFKA_SASL_USERNAME', { ...kafkaScram, KAFKA_SASL_USERNAME: undefined }, 'is required with KAFKA_SASL_MECHANISM'],
    ['KAFKA_SASL_PASSWORD', { ...kafkaScram, KAFKA_SASL_PASSWORD: undefined }, 'is required with KAFKA_SASL_MECHANISM'],
    // Credentials without a mechanism would be sent nowhere.
    ['KAFKA_SASL_USERNAME', { ...kafkaScram, KAFKA_SASL_MECHANISM: '' }, 'is only read with KAFKA_SASL_MECHANISM'],
    ['TEMPORAL_TLS_KEY_FILE', { TEMPORAL_TLS_CERT_FILE: client.cert }, 'is required with TEMPORAL_TLS_CERT_FILE'],
    ['TEMPORAL_TLS_KEY_FILE', { TEMPORAL_TLS_KEY_FILE: client.key }, 'is only read with TEMPORAL_TLS_CERT_FILE'],
    ['TEMPORAL_TLS_KEY_FILE', { TEMPORAL_TLS_CERT_FILE: client.cert, TEMPORAL_TLS_KEY_FILE: other.key }, 'is not the key of TEMPORAL_TLS_CERT_FILE\'s certificate'],
    ['TEMPORAL_TLS_KEY_FILE', { TEMPORAL_TLS_CERT_FILE: client.cert, TEMPORAL_TLS_KEY_FILE: client.cert }, 'holds no unencrypted PEM private key'],
    ['TEMPORAL_TLS_CERT_FILE', { TEMPORAL_TLS_CERT_FILE: join(dir, 'missing.crt'), TEMPORAL_TLS_KEY_FILE: client.key }, 'cannot be read \\(ENOENT'],
    ['TEMPORAL_TLS_CA_FILE', { TEMPORAL_TLS_CA_FILE: keyFile }, 'holds no PEM certificate'],
    ['TEMPORAL_API_KEY', { TEMPORAL_TLS_CERT_FILE: client.cert, TEMPORAL_TLS_KEY_FILE: client.key, TEMPORAL_API_KEY: 'k' }, 'and TEMPORAL_TLS_CERT_FILE are two ways to authenticate'],
    // A server name checks a certificate: on a plain connection there is none.
    ['TEMPORAL_TLS_SERVER_NAME', { TEMPORAL_TLS_SERVER_NAME: 'temporal.internal' }, 'is only read with TLS'],
  ])('refuses %s in %j', (variable, change, reason) => {
    for (const environment of [{}, productionEnvironment()]) {
      expect(() => loadConfig({ ...environment, ...change }))
        .toThrow(new RegExp(`^Invalid configuration:\\n {2}${variable}: "${variable}" ${reason}`));
    }
  });
});
