import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { brief, check, expectProblem, expectStatus } from '../expect';
import { StepFailed } from '../failures';
import type { Http } from '../http';
import { short, type State } from '../state';
import type { Tour } from '../steps';
import { waitUntil } from '../wait';

// What an integrator's backend uses: an API key in place of a person's password, a signed webhook
// received on this machine (the local platform allows loopback receivers, WEBHOOKS_ALLOW_LOOPBACK),
// the caller's own sessions, and the key's revocation.

interface Delivery {
  id: string;
  type: string;
  data: Record<string, unknown>;
}

/** A local receiver that accepts only what the endpoint's secret signed, as a Standard Webhooks client checks it. */
class Receiver {
  readonly deliveries: Delivery[] = [];
  readonly refused: string[] = [];
  private server: Server | null = null;
  secret: string | null = null;

  async listen(): Promise<string> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        try {
          const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]));
          this.deliveries.push(new Webhook(this.secret!).verify(Buffer.concat(chunks).toString('utf8'), headers) as Delivery);
          response.writeHead(204).end();
        } catch (error) {
          this.refused.push(error instanceof Error ? error.message : String(error));
          response.writeHead(400).end();
        }
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  close(): void {
    this.server?.close();
  }
}

export async function integrations(tour: Tour, http: Http, state: State, crmInstalled: boolean): Promise<void> {
  const owner = state.owner;
  await tour.area('integrations', !owner ? 'needs the owner session of identity' : crmInstalled ? null : 'needs crm installed by modules', async (step) => {
    const { token } = owner!;
    const receiver = new Receiver();
    let key = '';
    let keyId = '';
    let endpointId = '';
    try {
      await step('create an API key', async () => {
        const answer = await http.post<{ id: string; key: string; prefix: string }>('/v1/api-keys', {
          name: `tour ${state.runId}`, permissions: ['users.list', 'events.publish'],
        }, token);
        expectStatus(answer, 201);
        check(answer.body.key.startsWith('plat_'), `expected a plat_ key, got ${brief(answer)}`);
        ({ key, id: keyId } = answer.body);
        return `201 key ${answer.body.prefix}… (shown once)`;
      });
      await step('the key lists users (X-API-Key)', async () => {
        const answer = await http.get<{ data: unknown[] }>('/v1/users', undefined, { 'x-api-key': key });
        expectStatus(answer, 200);
        return `200 ${answer.body.data.length} user(s)`;
      });
      await step('the key may not read roles', async () => {
        expectProblem(await http.get('/v1/roles', undefined, { 'x-api-key': key }), 403, 'forbidden');
        return '403 forbidden';
      });
      await step('register a webhook endpoint for crm.contact.*', async () => {
        const url = await receiver.listen();
        const answer = await http.post<{ id: string; secret: string }>('/v1/webhooks/endpoints', { url, eventTypes: ['crm.contact.*'] }, token);
        expectStatus(answer, 201);
        receiver.secret = answer.body.secret;
        endpointId = answer.body.id;
        return `201 endpoint ${short(endpointId)} → ${url}`;
      });
      const contactId = randomUUID();
      let eventId = '';
      await step('the key publishes crm.contact.created', async () => {
        const answer = await http.post<{ eventId: string }>('/v1/events/publish', {
          type: 'crm.contact.created', data: { id: contactId, firstName: 'Hedy', lastName: 'Lamarr' },
        }, undefined, { authorization: `Bearer ${key}` });
        expectStatus(answer, 201);
        eventId = answer.body.eventId;
        return `201 event ${short(eventId)}`;
      });
      await step('the receiver gets it, signed', async () => {
        const started = Date.now();
        const delivery = await waitUntil('the signed delivery', () => {
          if (receiver.refused.length > 0) throw new StepFailed(`a delivery failed its signature check: ${receiver.refused[0]}`);
          return [receiver.deliveries.find((received) => received.id === eventId), `${receiver.deliveries.length} delivery(ies)`];
        });
        check(delivery.type === 'crm.contact.created' && delivery.data.id === contactId, `expected the contact's event, got ${JSON.stringify(delivery)}`);
        return `OK webhook-id ${short(delivery.id)} verified after ${Date.now() - started} ms`;
      });
      await step('the endpoint\'s attempts', async () => {
        const answer = await waitUntil('the attempt to be recorded', async () => {
          const attempts = await http.get<{ data: { eventId: string; status: string; responseStatus: number | null }[] }>(`/v1/webhooks/endpoints/${endpointId}/attempts`, token);
          expectStatus(attempts, 200);
          const found = attempts.body.data.find((attempt) => attempt.eventId === eventId && attempt.status === 'succeeded');
          return [found, brief(attempts)];
        });
        return `200 succeeded, the receiver answered ${answer.responseStatus}`;
      });
      await step('the caller\'s sessions', async () => {
        const answer = await http.get<{ data: { id: string; current: boolean }[] }>('/v1/auth/sessions', token);
        expectStatus(answer, 200);
        check(answer.body.data.filter((session) => session.current).length === 1, `expected one current session, got ${brief(answer)}`);
        return `200 ${answer.body.data.length} session(s), one current`;
      });
      await step('revoke the key', async () => {
        expectStatus(await http.send('DELETE', `/v1/api-keys/${keyId}`, { token }), 204);
        // Every gateway drops the key once PostgreSQL announces the revocation (within a second).
        await waitUntil('the revoked key to be refused', async () => {
          const answer = await http.get('/v1/users', undefined, { 'x-api-key': key });
          return [answer.status === 401 ? true : undefined, `${answer.status}`];
        }, 5_000, 100);
        return '204, then 401 for the key';
      });
      await step('delete the endpoint', async () => {
        expectStatus(await http.send('DELETE', `/v1/webhooks/endpoints/${endpointId}`, { token }), 204);
        return '204';
      });
    } finally {
      receiver.close();
    }
  });
}
