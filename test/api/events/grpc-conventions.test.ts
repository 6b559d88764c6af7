import { dirname, join } from 'node:path';
import { credentials, loadPackageDefinition, Metadata, status, type Client, type ClientReadableStream, type ServiceClientConstructor } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { unaryCall } from '../../../common/proto';
import { healthServiceClass } from '../../../api/grpc/health';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { failure } from '../../helpers/grpc';

/**
 * The conventions gRPC tooling expects of the gateway's EventService port (docs/decisions/events.md):
 * server reflection, v1 and v1alpha, read through the reflection protocol as grpcurl reads it (with
 * the reflection proto @grpc/reflection ships, none of ours), and grpc.health.v1.Health.
 */
jest.setTimeout(60_000);

let gateway: TestGateway;
const clients: Client[] = [];

beforeAll(async () => {
  gateway = await startTestGateway();
});

afterAll(async () => {
  clients.forEach((client) => client.close());
  await gateway?.close();
});

/** The ServerReflection client of a reflection version, from @grpc/reflection's own proto files. */
function reflectionClient(version: 'v1' | 'v1alpha'): Client {
  const root = join(dirname(require.resolve('@grpc/reflection/package.json')), 'build', 'proto');
  const definition = loadSync(`grpc/reflection/${version}/reflection.proto`, { includeDirs: [root], keepCase: true, defaults: true, oneofs: true });
  const pkg = loadPackageDefinition(definition) as unknown as { grpc: { reflection: Record<string, { ServerReflection: ServiceClientConstructor }> } };
  const client = new pkg.grpc.reflection[version].ServerReflection(gateway.grpcAddress, credentials.createInsecure());
  clients.push(client);
  return client;
}

interface ReflectionResponse {
  list_services_response?: { service: { name: string }[] };
  file_descriptor_response?: { file_descriptor_proto: Buffer[] };
  error_response?: { error_code: number };
}

/** One request on the bidirectional ServerReflectionInfo stream, and its answer. */
function reflect(client: Client, request: Record<string, string>): Promise<ReflectionResponse> {
  const call = (client as unknown as { ServerReflectionInfo(): NodeJS.ReadWriteStream & { end(): void } }).ServerReflectionInfo();
  return new Promise((resolve, reject) => {
    call.on('data', (response: ReflectionResponse) => {
      resolve(response);
      call.end();
    });
    call.on('error', reject);
    call.write(request as never);
  });
}

describe('server reflection', () => {
  it.each(['v1', 'v1alpha'] as const)('%s lists the EventService and the health service', async (version) => {
    const response = await reflect(reflectionClient(version), { list_services: '' });
    expect(response.list_services_response?.service.map((service) => service.name)).toEqual(expect.arrayContaining([
      'platform.events.v1.EventService', 'grpc.health.v1.Health',
    ]));
  });

  it.each(['v1', 'v1alpha'] as const)('%s describes the EventService by its symbol, so a client needs no proto file', async (version) => {
    const response = await reflect(reflectionClient(version), { file_containing_symbol: 'platform.events.v1.EventService' });
    const files = response.file_descriptor_response?.file_descriptor_proto ?? [];
    expect(files.length).toBeGreaterThan(0);
    expect(Buffer.concat(files).toString('latin1')).toContain('EventService');
  });

  it('answers an unknown symbol with NOT_FOUND', async () => {
    const response = await reflect(reflectionClient('v1'), { file_containing_symbol: 'no.such.Service' });
    expect(response.error_response?.error_code).toBe(status.NOT_FOUND);
  });
});

describe('grpc.health.v1.Health', () => {
  const health = () => {
    const Health = healthServiceClass();
    const client = new Health(gateway.grpcAddress, credentials.createInsecure());
    clients.push(client);
    return client;
  };

  it.each(['', 'platform.events.v1.EventService'])('Check of "%s" is SERVING while the broker answers, without a token', async (service) => {
    expect(await unaryCall(health(), 'Check', { service }, new Metadata())).toEqual({ status: 'SERVING' });
  });

  it('Check of an unknown service is NOT_FOUND', async () => {
    expect(await failure(unaryCall(health(), 'Check', { service: 'no.such.Service' }, new Metadata())))
      .toMatchObject({ code: status.NOT_FOUND });
  });

  it.each([
    ['platform.events.v1.EventService', 'SERVING'],
    ['no.such.Service', 'SERVICE_UNKNOWN'],
  ])('Watch of %s sends %s at once', async (service, expected) => {
    const call = (health() as unknown as { Watch(request: object): ClientReadableStream<{ status: string }> }).Watch({ service });
    const first = await new Promise<{ status: string }>((resolve, reject) => {
      call.once('data', resolve);
      call.once('error', reject);
    });
    expect(first).toEqual({ status: expected });
    // Changes follow on the same stream (test/unit/events/grpc-health.test.ts); the client ends it.
    call.on('error', () => undefined);
    call.cancel();
  });
});
