import { status as grpcStatus, type ServiceError } from '@grpc/grpc-js';
import { randomBytes, randomUUID } from 'node:crypto';
import { brief, canonical, check, expectStatus } from '../expect';
import { StepFailed } from '../failures';
import { RpcRefused, type EventService, type WireEvent } from '../grpc';
import type { Http } from '../http';
import { idempotencyKey, short, uniqueEmail, type State } from '../state';
import type { Tour } from '../steps';
import { waitUntil } from '../wait';

// Events published over REST and gRPC, then a Subscribe stream that receives an event the tour causes.

export async function events(tour: Tour, http: Http, grpc: EventService, state: State, crmInstalled: boolean): Promise<void> {
  const owner = state.owner;
  await tour.area('events', !owner ? 'needs the owner session of identity' : crmInstalled ? null : 'needs crm installed by modules', async (step) => {
    const { token } = owner!;
    interface Published { eventId: string; topic: string; partition: number; offset: number }
    const key = idempotencyKey();
    const event = { type: 'crm.contact.created', data: { id: randomUUID(), firstName: 'Ada', lastName: 'Lovelace' } };
    let published: Published | undefined;
    await step('REST publish crm.contact.created', async () => {
      const answer = await http.post<Published>('/v1/events/publish', event, token, key);
      expectStatus(answer, 201);
      check(answer.body.topic === 'platform.data.events', `expected the topic platform.data.events, got ${brief(answer)}`);
      published = answer.body;
      return `201 ${published.topic} partition ${published.partition} offset ${published.offset}`;
    });
    await step('REST publish repeated with its key', async () => {
      const answer = await http.post<Published>('/v1/events/publish', event, token, key);
      expectStatus(answer, 200);
      check(canonical(answer.body) === canonical(published), `expected the first answer again, got ${brief(answer)}`);
      return `200 event ${short(published!.eventId)} again`;
    });
    await step('gRPC ListTopics', async () => {
      const { topics } = await grpc.unary<{ topics: { name: string; partition_count: number }[] }>('ListTopics', {}, token);
      const names = topics.map((topic) => topic.name);
      check(names.includes('platform.data.events') && names.includes('platform.auth.events'), `expected the data and auth topics, got ${names.join(', ')}`);
      return `OK ${names.length} topics`;
    });
    await step('gRPC Publish crm.contact.updated', async () => {
      const id = randomUUID();
      const response = await grpc.unary<{ event_id: string }>('Publish', {
        topic: 'platform.data.events', key: event.data.id,
        event: { id, type: 'crm.contact.updated', data: Buffer.from(JSON.stringify({ id: event.data.id, age: 37 })), schema_version: '1.0.0' },
      }, token);
      check(response.event_id === id, `expected event_id ${id}, got ${response.event_id}`);
      return `OK event ${short(id)}`;
    });
    // A stream receives the types its module subscribes to (services/events/subscription-rules.ts):
    // crm subscribes to auth.user.created, so the group listens to the auth topic while the tour
    // creates a user in the tenant, whose event reaches Kafka through the outbox relay.
    const group = `crm.tour-${randomBytes(4).toString('hex')}`;
    const target = { topic: 'platform.auth.events', group_id: group };
    const received: WireEvent[] = [];
    let ended: string | null = null;
    const stream = grpc.subscribe(target, token);
    stream.on('data', ({ event: wire }: { event: WireEvent }) => received.push(wire));
    stream.on('error', (error: ServiceError) => { ended = `${grpcStatus[error.code] ?? error.code} ${error.details}`; });
    stream.on('end', () => { ended ??= 'ended'; });
    try {
      await step('gRPC Subscribe to platform.auth.events', async () => {
        await waitUntil(`group ${group} to exist`, async () => {
          if (ended) throw new StepFailed(`the stream ended: ${ended}`);
          // NOT_FOUND until the stream has committed the group's start offsets (it starts at the end).
          const position = await grpc.unary<{ latest_offset: string }>('GetConsumerPosition', target, token).catch((error: unknown) => {
            if (error instanceof RpcRefused && error.code === grpcStatus.NOT_FOUND) return undefined;
            throw error;
          });
          return [position, 'the group does not exist yet'];
        }, 20_000, 200);
        return `OK group ${group}`;
      });
      await step('create a user while subscribed', async () => {
        const answer = await http.post<{ id: string }>('/v1/users', { email: uniqueEmail(state, 'witness'), firstName: 'Event', lastName: 'Witness' }, token);
        expectStatus(answer, 201);
        state.witnessId = answer.body.id;
        return `201 user ${short(answer.body.id)}`;
      });
      await step('the stream delivers auth.user.created', async () => {
        const started = Date.now();
        const delivered = await waitUntil('auth.user.created of the new user on the stream', () => {
          if (ended) throw new StepFailed(`the stream ended: ${ended}`);
          const match = received.find((wire) => wire.type === 'auth.user.created'
            && (JSON.parse(Buffer.from(wire.data).toString('utf8')) as { user_id?: string }).user_id === state.witnessId);
          return [match, `${received.length} event(s)`];
        });
        check(delivered.tenant_id === owner!.tenantId, `expected tenant ${owner!.tenantId}, got ${delivered.tenant_id}`);
        return `OK event ${short(delivered.id)} after ${Date.now() - started} ms`;
      });
      await step('end the stream, then gRPC Unsubscribe', async () => {
        // Behind a balancer the Unsubscribe may reach a gateway that does not hold the stream, and
        // that one refuses while the group has members elsewhere (FAILED_PRECONDITION): so the
        // stream is ended first, and the call repeated until its member has left the group.
        stream.cancel();
        let refused = 0;
        await waitUntil(`group ${group} unsubscribed`, async () => {
          try {
            await grpc.unary('Unsubscribe', target, token);
            return [true, 'OK'];
          } catch (error) {
            if (!(error instanceof RpcRefused && error.code === grpcStatus.FAILED_PRECONDITION)) throw error;
            refused += 1;
            return [undefined, error.message];
          }
        }, 30_000, 500);
        return `OK${refused ? ` after ${refused} FAILED_PRECONDITION (members elsewhere)` : ''}`;
      });
    } finally {
      stream.cancel();
    }
  });
}
