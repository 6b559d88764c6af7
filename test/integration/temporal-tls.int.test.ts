import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Server, ServerCredentials, type ServerUnaryCall, type sendUnaryData } from '@grpc/grpc-js';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { NativeConnection } from '@temporalio/worker';
import { config, loadConfig, type Config } from '../../common/config';
import { newId } from '../../common/ids';
import { repoRoot } from '../../common/paths';
import { connectTemporal } from '../../common/temporal/client';
import { temporalConnectionOptions } from '../../common/temporal/connection-options';
import { bundleWorkflows } from '../../workers/temporal/worker';
import { createTestWorker, uniqueTaskQueue } from '../helpers/temporal';
import { localTls, writeUnrelatedCa } from '../helpers/tls';
import { childContextProbe } from '../workflows/fixtures/context-probe.workflows';

/**
 * The platform's Temporal connections (common/temporal/connection-options.ts: the gateway's client of
 * connectTemporal, the workers' NativeConnection) over TLS. mTLS against a real Temporal server: a
 * second one of the cluster profile's kind, started by test/helpers/temporal-tls-server.sh with
 * requireClientAuth on its frontend and a namespace of its own. Temporal Cloud's API key cannot be
 * tried against Temporal Cloud: a TLS gRPC server here records what the connections send.
 */
const run = promisify(execFile);
const NAMESPACE = 'platform-tls-test';
const helper = join(repoRoot, 'test/helpers/temporal-tls-server.sh');

/** True when nothing listens on the port of 127.0.0.1 (checked by binding it). */
function portFree(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A frontend port whose whole layout is free (scripts/infra/services/temporal-server.sh: history +1,
 * matching +2, worker +6, HTTP API +10, membership -300 each), and a metrics port.
 */
async function freeServerPorts(): Promise<{ port: number; metricsPort: number }> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = 21_000 + Math.floor(Math.random() * 8000);
    const layout = [0, 1, 2, 6, 10].flatMap((offset) => [port + offset, port + offset - 300]);
    const metricsPort = port + 20;
    const free = await Promise.all([...layout, metricsPort].map(portFree));
    if (free.every(Boolean)) return { port, metricsPort };
  }
  throw new Error('no free port layout for the second Temporal server');
}

/** The process's configuration with `change` on top, validated as at start-up. */
const configWith = (change: Record<string, string>): Readonly<Config> => loadConfig({ ...process.env, ...change });

describe('Temporal with mTLS (a second server, requireClientAuth)', () => {
  let env: Record<string, string>;
  let tlsDir: string;
  let mtls: Readonly<Config>;
  let probeBundle: WorkflowBundleWithSourceMap;

  beforeAll(async () => {
    const { port, metricsPort } = await freeServerPorts();
    env = { ...process.env as Record<string, string>, TSERVER_PORT: String(port), TSERVER_METRICS_PORT: String(metricsPort), TSERVER_NAMESPACE: NAMESPACE };
    const [started, bundle] = await Promise.all([
      run('bash', [helper, 'start'], { env, timeout: 150_000 }).catch((error: { stderr?: string } & Error) => {
        throw new Error(`${error.message}\n${error.stderr ?? ''}`);
      }),
      bundleWorkflows(require.resolve('../workflows/fixtures/context-probe.workflows')),
    ]);
    probeBundle = bundle;
    tlsDir = started.stdout.trim().split('\n').at(-1)!;
    mtls = configWith({
      TEMPORAL_ADDRESS: `127.0.0.1:${port}`, TEMPORAL_NAMESPACE: NAMESPACE,
      TEMPORAL_TLS_CERT_FILE: join(tlsDir, 'temporal-client.crt'), TEMPORAL_TLS_KEY_FILE: join(tlsDir, 'temporal-client.key'),
      TEMPORAL_TLS_CA_FILE: join(tlsDir, 'ca.crt'), TEMPORAL_TLS_SERVER_NAME: 'localhost',
    });
  }, 180_000);

  afterAll(async () => {
    if (env) await run('bash', [helper, 'stop'], { env, timeout: 60_000 });
  }, 60_000);

  it('describes the namespace and completes a workflow through the gateway\'s client and a worker\'s connection', async () => {
    const { connection, client } = await connectTemporal(mtls.temporal, mtls.temporalCodec);
    const nativeConnection = await NativeConnection.connect(temporalConnectionOptions(mtls.temporal));
    try {
      const { namespaceInfo } = await connection.workflowService.describeNamespace({ namespace: NAMESPACE });
      expect(namespaceInfo?.name).toBe(NAMESPACE);

      const taskQueue = uniqueTaskQueue('temporal-tls');
      const seen = { tenantId: newId(), traceId: 'ab'.repeat(16), actorId: null };
      const worker = await createTestWorker({ nativeConnection, namespace: mtls.temporal.namespace }, {
        taskQueue, workflowBundle: probeBundle, activities: { seenContext: async () => seen },
      });
      const result = await worker.runUntil(client.workflow.execute(childContextProbe, { taskQueue, workflowId: `test.temporal-tls:${newId()}` }));
      expect(result).toEqual(seen);
    } finally {
      await connection.close();
      await nativeConnection.close();
    }
  }, 60_000);

  it('is refused without a client certificate', async () => {
    const withoutCertificate = configWith({
      TEMPORAL_ADDRESS: mtls.temporal.address, TEMPORAL_NAMESPACE: NAMESPACE,
      TEMPORAL_TLS_CA_FILE: join(tlsDir, 'ca.crt'), TEMPORAL_TLS_SERVER_NAME: 'localhost',
    });
    expect(temporalConnectionOptions(withoutCertificate.temporal).tls).toEqual({
      serverNameOverride: 'localhost', serverRootCACertificate: expect.any(Buffer),
    });
    // The server ends the handshake (alert certificate_required): grpc-js keeps retrying until the
    // gateway's 5 s connect deadline; the worker's Rust core reports the alert, or, since TLS 1.3 lets
    // the client finish its side first, whatever it met next on the connection the server closed (the
    // close itself, or a broken pipe when its first request was already being written: which one
    // depends on timing). Every one of them is a transport failure, never an answer.
    await expect(connectTemporal(withoutCertificate.temporal, withoutCertificate.temporalCodec)).rejects.toThrow(/Failed to connect before the deadline/);
    await expect(NativeConnection.connect(temporalConnectionOptions(withoutCertificate.temporal)))
      .rejects.toThrow(/CertificateRequired|connection closed|transport error/);
  });

  it('refuses a server whose certificate another CA signed', async () => {
    const unrelated = configWith({
      TEMPORAL_ADDRESS: mtls.temporal.address, TEMPORAL_NAMESPACE: NAMESPACE,
      TEMPORAL_TLS_CERT_FILE: join(tlsDir, 'temporal-client.crt'), TEMPORAL_TLS_KEY_FILE: join(tlsDir, 'temporal-client.key'),
      TEMPORAL_TLS_CA_FILE: writeUnrelatedCa(join(tlsDir, 'unrelated-ca.crt')), TEMPORAL_TLS_SERVER_NAME: 'localhost',
    });
    await expect(connectTemporal(unrelated.temporal, unrelated.temporalCodec)).rejects.toThrow(/Failed to connect before the deadline/);
    await expect(NativeConnection.connect(temporalConnectionOptions(unrelated.temporal))).rejects.toThrow(/InvalidCertificate\(UnknownIssuer\)/);
  });
});

describe('TEMPORAL_API_KEY', () => {
  const API_KEY = `test-api-key-${newId()}`;
  const seen: Array<{ authorization: string[] }> = [];
  let server: Server;
  let address: string;

  /**
   * A TLS gRPC server with the local servers' certificate that answers GetSystemInfo (the first call
   * of both connections) with an empty response and records the call's authorization metadata.
   */
  beforeAll(async () => {
    const tls = localTls(config().dataDir);
    const identity = (value: Buffer) => value;
    server = new Server();
    server.addService({
      GetSystemInfo: {
        path: '/temporal.api.workflowservice.v1.WorkflowService/GetSystemInfo',
        requestStream: false, responseStream: false,
        requestSerialize: identity, requestDeserialize: identity, responseSerialize: identity, responseDeserialize: identity,
      },
    }, {
      GetSystemInfo: (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => {
        seen.push({ authorization: call.metadata.get('authorization').map(String) });
        callback(null, Buffer.alloc(0));
      },
    });
    const credentials = ServerCredentials.createSsl(null, [{ private_key: readFileSync(tls.keyFile), cert_chain: readFileSync(tls.certFile) }], false);
    const port = await new Promise<number>((resolve, reject) => {
      server.bindAsync('127.0.0.1:0', credentials, (error, bound) => (error ? reject(error) : resolve(bound)));
    });
    address = `127.0.0.1:${port}`;
  });

  afterAll(() => new Promise<void>((resolve) => server?.tryShutdown(() => resolve())));
  beforeEach(() => { seen.length = 0; });

  const withApiKey = () => configWith({
    TEMPORAL_ADDRESS: address, TEMPORAL_API_KEY: API_KEY, TEMPORAL_TLS_CA_FILE: localTls(config().dataDir).caFile, TEMPORAL_TLS_SERVER_NAME: 'localhost',
  });

  it('turns TLS on and carries the key', () => {
    expect(temporalConnectionOptions(withApiKey().temporal)).toEqual({
      address, apiKey: API_KEY, tls: { serverNameOverride: 'localhost', serverRootCACertificate: expect.any(Buffer) },
    });
    // Without a CA file the server is checked against the public CAs, as Temporal Cloud's is.
    expect(temporalConnectionOptions(configWith({ TEMPORAL_API_KEY: API_KEY }).temporal).tls).toEqual({});
  });

  it('is sent as "authorization: Bearer <key>" over TLS by the gateway\'s client', async () => {
    const cfg = withApiKey();
    const { connection } = await connectTemporal(cfg.temporal, cfg.temporalCodec);
    await connection.close();
    expect(seen).toEqual([{ authorization: [`Bearer ${API_KEY}`] }]);
  });

  it('is sent the same way by a worker\'s native connection', async () => {
    const connection = await NativeConnection.connect(temporalConnectionOptions(withApiKey().temporal));
    await connection.close();
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every(({ authorization }) => authorization.length === 1 && authorization[0] === `Bearer ${API_KEY}`)).toBe(true);
  });

  it('is not sent without TEMPORAL_API_KEY (a plain connection cannot even reach this server)', async () => {
    const plain = configWith({ TEMPORAL_ADDRESS: address });
    await expect(connectTemporal(plain.temporal, plain.temporalCodec)).rejects.toThrow();
    expect(seen).toEqual([]);
  });
});
