import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { config, loadConfig, type Config } from '../../common/config';
import { LOCAL_KAFKA_SASL } from '../../common/config/events';
import {
  createConsumer, createKafka, createOrderedProducer, createTopics, deleteTopics, describeBroker, sendInOrder, type KafkaSettings,
} from '../../common/kafka';
import { localTls, tcpRelay, writeUnrelatedCa } from '../helpers/tls';

/**
 * The platform's Kafka factory (common/kafka.ts, createKafka) over SASL_SSL with SCRAM, as managed
 * Kafka services take it, against the local broker's second listener (127.0.0.1:9094,
 * scripts/infra/services/kafka.sh): TLS checked against the local CA, the SCRAM user the bring-up
 * creates. The settings go through loadConfig, as a deployment's would.
 */
const { caFile } = localTls(config().dataDir);
const scratch = mkdtempSync(join(tmpdir(), 'kafka-sasl-ssl-'));
const unrelatedCa = writeUnrelatedCa(join(scratch, 'unrelated-ca.crt'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const SASL_SSL_BROKER = '127.0.0.1:9094';

const kafkaConfig = (mechanism: string, change: Record<string, string> = {}): Config['kafka'] => loadConfig({
  ...process.env,
  KAFKA_BROKERS: SASL_SSL_BROKER, KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: caFile,
  KAFKA_SASL_MECHANISM: mechanism, KAFKA_SASL_USERNAME: LOCAL_KAFKA_SASL.username, KAFKA_SASL_PASSWORD: LOCAL_KAFKA_SASL.password,
  ...change,
}).kafka;

/** A refusal must come at once: one connection attempt, no retries. */
const QUICK = { connectionTimeoutMs: 5000, requestTimeoutMs: 5000, retries: 0 };

async function describeWith(settings: KafkaSettings) {
  const admin = createKafka(settings, undefined, QUICK).admin();
  try {
    await admin.connect();
    return await describeBroker(admin);
  } finally {
    await admin.disconnect();
  }
}

describe('Kafka over SASL_SSL with SCRAM', () => {
  it('is what the configuration gives every client', () => {
    expect(kafkaConfig('scram-sha-256')).toMatchObject({
      brokers: [SASL_SSL_BROKER], ssl: true, sslCaFile: caFile,
      sasl: { mechanism: 'scram-sha-256', username: LOCAL_KAFKA_SASL.username, password: LOCAL_KAFKA_SASL.password },
    });
  });

  it.each(['scram-sha-256', 'scram-sha-512'])('logs in with %s', async (mechanism) => {
    await expect(describeWith(kafkaConfig(mechanism))).resolves.toEqual({ brokers: 1, controller: 1 });
  });

  it('produces a message and consumes it back', async () => {
    // Produced with one mechanism, consumed with the other: both reach the same user.
    const producing = createKafka(kafkaConfig('scram-sha-256'));
    const consuming = createKafka(kafkaConfig('scram-sha-512'));
    const topic = `test.sasl-ssl.${randomBytes(4).toString('hex')}`;
    const admin = producing.admin();
    await admin.connect();
    const producer = createOrderedProducer(producing);
    const consumer = createConsumer(consuming, { groupId: `test.sasl-ssl.${randomBytes(4).toString('hex')}`, maxWaitTimeInMs: 100 });
    try {
      await createTopics(admin, [{ name: topic, partitions: 1, replicationFactor: 1, configs: {} }]);
      await producer.connect();
      await sendInOrder(producer, [{ topic, key: 'k', value: 'over sasl_ssl', headers: { test: 'kafka-sasl-ssl' } }]);

      await consumer.connect();
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      const received = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no message within 20 s')), 20_000);
        consumer.run({
          eachMessage: async ({ message }) => {
            clearTimeout(timer);
            resolve(message.value?.toString() ?? '');
          },
        }).catch(reject);
      });
      expect(received).toBe('over sasl_ssl');
    } finally {
      await consumer.disconnect();
      await producer.disconnect();
      await deleteTopics(admin, [topic]).catch(() => undefined);
      await admin.disconnect();
    }
  });

  it('is refused with a wrong password', async () => {
    await expect(describeWith(kafkaConfig('scram-sha-256', { KAFKA_SASL_PASSWORD: 'not-the-password' })))
      .rejects.toThrow(/SASL SCRAM SHA256 authentication failed.*invalid credentials/);
  });

  it('refuses a broker whose certificate another CA signed', async () => {
    await expect(describeWith(kafkaConfig('scram-sha-256', { KAFKA_SSL_CA_FILE: unrelatedCa })))
      .rejects.toThrow(/unable to verify the first certificate/);
  });

  it('checks the host name', async () => {
    // The same listener dialled as 127.0.0.2, a name its certificate (127.0.0.1, localhost) does not carry.
    const relay = await tcpRelay({ host: '127.0.0.1', port: 9094 });
    try {
      await expect(describeWith(kafkaConfig('scram-sha-256', { KAFKA_BROKERS: `${relay.host}:${relay.port}` })))
        .rejects.toThrow(/Hostname\/IP does not match certificate's altnames/);
    } finally {
      await relay.close();
    }
  });
});
