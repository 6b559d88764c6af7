import { join } from 'node:path';
import protobuf from 'protobufjs';
import { repoRoot } from '../../../common/paths';

// The proto is the gRPC contract of docs/reference/events.md; this keeps it loadable and complete as it evolves.
describe('protos/platform/events/v1/events.proto', () => {
  let root: protobuf.Root;

  beforeAll(async () => {
    root = new protobuf.Root();
    root.resolvePath = (_origin, target) =>
      target.startsWith('google/protobuf/') ? target : join(repoRoot, 'protos', target);
    await root.load('platform/events/v1/events.proto', { keepCase: true });
    root.resolveAll();
  });

  it('declares the ten RPCs of EventService, and Consume, the SDK\'s acknowledged Subscribe', () => {
    const service = root.lookupService('platform.events.v1.EventService');
    expect(Object.keys(service.methods).sort()).toEqual([
      'BatchPublish', 'Consume', 'DLQReplayAll', 'DLQRetry', 'GetConsumerPosition', 'GetTopicSchema',
      'ListTopics', 'Publish', 'ReplayFrom', 'Subscribe', 'Unsubscribe',
    ]);
    expect(service.methods.Subscribe.responseStream).toBe(true);
    expect([service.methods.Consume.requestStream, service.methods.Consume.responseStream]).toEqual([true, true]);
  });

  it('round-trips an Event with its envelope fields', () => {
    const Event = root.lookupType('platform.events.v1.Event');
    const value = {
      id: '0192f0c4-7a3e-7cc1-9b1e-1c2d3e4f5a6b', type: 'crm.contact.created', source: 'crm',
      tenant_id: '0192f0c4-7a3e-7cc1-9b1e-000000000001', data: Buffer.from('{"id":1}'),
      schema_version: '1.0.0', trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
    };
    const decoded = Event.toObject(Event.decode(Event.encode(Event.fromObject(value)).finish()), { bytes: Buffer });
    expect(decoded).toMatchObject({ ...value, data: Buffer.from('{"id":1}') });
  });
});
