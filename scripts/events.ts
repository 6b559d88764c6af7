import { credentials, Metadata, status, type Client, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import { parseArgs } from 'node:util';
import { config } from '../common/config';
import { unaryCall } from '../common/proto';
import { eventServiceClass } from '../services/events/event-service';

const USAGE = `usage: npm run events -- <command> [options]   (token: --token <access token> or PLATFORM_TOKEN)
  list-topics
  get-topic-schema --topic <topic or event type>
  publish --topic <topic> --key <partition key> --type <event type> --data '<JSON object>' [--schema-version 1.0.0] [--id <uuid>]
  batch-publish --topic <topic> --items '[{"key": "…", "type": "…", "data": {…}}, …]'
  subscribe --topic <topic> --group <service>.<handler>      (prints one JSON line per event until Ctrl-C)
  position --topic <topic> --group <service>.<handler>
  replay-from --topic <topic> --group <service>.<handler> --from <ISO 8601 time>
  unsubscribe --topic <topic> --group <service>.<handler>
options: --address <host:port> (default API_HOST:GRPC_PORT, 127.0.0.1:50051)
`;

class UsageError extends Error {}

interface BatchItem {
  key: string;
  type: string;
  data: unknown;
  schemaVersion?: string;
  id?: string;
}

/** The wire Event of events.proto: data is the JSON of the payload, as bytes. */
function eventOf(item: BatchItem): Record<string, unknown> {
  return {
    type: item.type, data: Buffer.from(JSON.stringify(item.data)),
    ...(item.schemaVersion ? { schema_version: item.schemaVersion } : {}), ...(item.id ? { id: item.id } : {}),
  };
}

function json(text: string | undefined, option: string): unknown {
  if (text === undefined) throw new UsageError(`${option} is required`);
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`${option} is not JSON`);
  }
}

function required(value: string | undefined, option: string): string {
  if (!value) throw new UsageError(`${option} is required`);
  return value;
}

/** A consumer group's RPCs name its topic and group (the group is the caller's tenant's). */
function groupRequest(values: Record<string, string | undefined>): { topic: string; group_id: string } {
  return { topic: required(values.topic, '--topic'), group_id: required(values.group, '--group') };
}

/** The RPC and request of a command line. */
function requestOf(command: string | undefined, values: Record<string, string | undefined>): [string, object] {
  switch (command) {
    case 'list-topics':
      return ['ListTopics', {}];
    case 'get-topic-schema':
      return ['GetTopicSchema', { topic: required(values.topic, '--topic') }];
    case 'publish': {
      const item = { key: required(values.key, '--key'), type: required(values.type, '--type'), data: json(values.data, '--data'), schemaVersion: values['schema-version'], id: values.id };
      return ['Publish', { topic: required(values.topic, '--topic'), key: item.key, event: eventOf(item) }];
    }
    case 'batch-publish': {
      const items = json(values.items, '--items');
      if (!Array.isArray(items)) throw new UsageError('--items is a JSON array');
      return ['BatchPublish', { topic: required(values.topic, '--topic'), items: (items as BatchItem[]).map((item) => ({ key: item.key, event: eventOf(item) })) }];
    }
    case 'subscribe':
    case 'position':
    case 'unsubscribe': {
      const rpc = { subscribe: 'Subscribe', position: 'GetConsumerPosition', unsubscribe: 'Unsubscribe' }[command];
      return [rpc, groupRequest(values)];
    }
    case 'replay-from': {
      const from = Date.parse(required(values.from, '--from'));
      if (Number.isNaN(from)) throw new UsageError('--from is an ISO 8601 time, such as 2026-01-02T03:04:05Z');
      return ['ReplayFrom', { ...groupRequest(values), from_timestamp: { seconds: String(Math.floor(from / 1000)), nanos: (from % 1000) * 1_000_000 } }];
    }
    default:
      throw new UsageError(command ? `unknown command ${command}` : 'a command is required');
  }
}

/**
 * `npm run events -- <command>`: calls the gateway's gRPC EventService (docs/reference/events.md) with the
 * project's proto, as any gRPC client would, and prints the answer as JSON. Exit 0 answered,
 * 1 the call failed (its status and details on stderr), 2 usage error.
 */
async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: Object.fromEntries(['token', 'address', 'topic', 'key', 'type', 'data', 'schema-version', 'id', 'items', 'group', 'from']
      .map((name) => [name, { type: 'string' as const }])),
  });
  let rpc: string;
  let request: object;
  try {
    [rpc, request] = requestOf(positionals[0], values);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`events: ${error.message}\n${USAGE}`);
    return 2;
  }
  const token = values.token ?? process.env.PLATFORM_TOKEN;
  const address = values.address ?? `${config().api.host}:${config().api.grpcPort}`;
  const metadata = new Metadata();
  if (token) metadata.set('authorization', `Bearer ${token}`);
  const EventService = eventServiceClass();
  const client = new EventService(address, credentials.createInsecure());
  try {
    if (rpc === 'Subscribe') return await printStream(client, request, metadata);
    const response = await unaryCall(client, rpc, request, metadata);
    process.stdout.write(`${JSON.stringify(response, null, 2)}\n`);
    return 0;
  } catch (error) {
    const { code, details } = error as ServiceError;
    process.stderr.write(`${rpc}: ${status[code] ?? code} ${details}\n`);
    return 1;
  } finally {
    client.close();
  }
}

/**
 * Subscribe: one JSON line per event (data decoded from its UTF-8 JSON bytes), until the stream
 * ends (0: Unsubscribe or ReplayFrom ended it), fails (1) or Ctrl-C cancels it (0).
 */
function printStream(client: Client, request: object, metadata: Metadata): Promise<number> {
  const stream = (client as unknown as { Subscribe(request: object, metadata: Metadata): ClientReadableStream<{ event: Record<string, unknown> }> })
    .Subscribe(request, metadata);
  process.once('SIGINT', () => stream.cancel());
  stream.on('data', ({ event }: { event: Record<string, unknown> }) => {
    const { data, ...rest } = event;
    process.stdout.write(`${JSON.stringify({ ...rest, data: JSON.parse(Buffer.from(data as Uint8Array).toString('utf8')) as unknown })}\n`);
  });
  return new Promise((resolve) => {
    stream.on('error', (error: ServiceError) => {
      if (error.code !== status.CANCELLED) process.stderr.write(`Subscribe: ${status[error.code] ?? error.code} ${error.details}\n`);
      resolve(error.code === status.CANCELLED ? 0 : 1);
    });
    stream.on('status', ({ code }: { code: status }) => { if (code === status.OK) resolve(0); });
  });
}

main().then((code) => process.exit(code), (error: unknown) => {
  process.stderr.write(`events: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
  process.exit(1);
});
