import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rootCertificates } from 'node:tls';
import { loadConfig } from '../../../common/config';
import { kafkaSecurity } from '../../../common/kafka';
import { temporalConnectionOptions } from '../../../common/temporal/connection-options';

/**
 * What the Kafka and Temporal factories hand their client libraries for each combination of the TLS
 * settings (docs/decisions/platform.md, TLS): kafkajs's `ssl`/`sasl` (common/kafka.ts), the `tls` and
 * `apiKey` of every Temporal Connection and NativeConnection (common/temporal/connection-options.ts).
 * The connections themselves are tested against servers in test/integration/kafka-sasl-ssl.int.test.ts
 * and temporal-tls.int.test.ts.
 */
const dir = mkdtempSync(join(tmpdir(), 'connection-security-'));
const caFile = join(dir, 'ca.crt');
writeFileSync(caFile, rootCertificates[0]);
const cert = join(dir, 'client.crt');
const key = join(dir, 'client.key');
execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
  '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=client'], { stdio: 'ignore' });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const kafkaOf = (env: Record<string, string>) => kafkaSecurity(loadConfig(env).kafka);
const temporalOf = (env: Record<string, string>) => temporalConnectionOptions(loadConfig({ TEMPORAL_ADDRESS: 'temporal.internal:7233', ...env }).temporal);

describe('kafkajs security of the settings', () => {
  it.each([
    ['plain (the default)', {}, {}],
    ['TLS with the public CAs', { KAFKA_SSL: 'true' }, { ssl: true }],
    ['TLS with a CA file', { KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: caFile }, { ssl: { ca: rootCertificates[0] } }],
    ['SASL_SSL with SCRAM', { KAFKA_SSL: 'true', KAFKA_SASL_MECHANISM: 'scram-sha-256', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' },
      { ssl: true, sasl: { mechanism: 'scram-sha-256', username: 'u', password: 'p' } }],
    ['an empty mechanism (.env.example\'s)', { KAFKA_SASL_MECHANISM: '' }, {}],
  ])('%s', (_name, env, expected) => {
    expect(kafkaOf(env)).toEqual(expected);
  });
});

describe('Temporal connection options of the settings', () => {
  it('is a plain connection without any TLS setting', () => {
    expect(temporalOf({})).toEqual({ address: 'temporal.internal:7233' });
  });

  it('presents the client certificate (mTLS), checking the server against the CA under the server name', () => {
    expect(temporalOf({ TEMPORAL_TLS_CERT_FILE: cert, TEMPORAL_TLS_KEY_FILE: key, TEMPORAL_TLS_CA_FILE: caFile, TEMPORAL_TLS_SERVER_NAME: 'frontend' }))
      .toEqual({
        address: 'temporal.internal:7233',
        tls: {
          serverNameOverride: 'frontend', serverRootCACertificate: readFileSync(caFile),
          clientCertPair: { crt: readFileSync(cert), key: readFileSync(key) },
        },
      });
  });

  it('checks the server against the public CAs with a client certificate and no CA file (Temporal Cloud)', () => {
    expect(temporalOf({ TEMPORAL_TLS_CERT_FILE: cert, TEMPORAL_TLS_KEY_FILE: key }).tls).toEqual({ clientCertPair: expect.any(Object) });
  });

  it('sends an API key over TLS', () => {
    expect(temporalOf({ TEMPORAL_API_KEY: 'k' })).toEqual({ address: 'temporal.internal:7233', tls: {}, apiKey: 'k' });
  });
});
