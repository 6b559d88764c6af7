import { createServer, type AddressInfo } from 'node:net';
import { problems } from '../../../common/problems';
import { endpointReceives } from '../../../services/events/webhooks/matching';
import { signingSecrets, signWebhook } from '../../../services/events/webhooks/signing';
import {
  addressAllowed, checkWebhookUrl, classifyAddress, webhookLookup, WebhookAddressRefused, type AddressClass, type WebhookUrlPolicy,
} from '../../../services/events/webhooks/url-policy';
import { Webhook } from 'standardwebhooks';

/**
 * Where webhooks may go (services/events/webhooks/url-policy.ts), which endpoints receive which
 * types (matching.ts), and the signatures (signing.ts) as a Standard Webhooks receiver checks them.
 */

const production: WebhookUrlPolicy = { allowHttp: false, allowLoopback: false };
const testStack: WebhookUrlPolicy = { allowHttp: false, allowLoopback: true };
const development: WebhookUrlPolicy = { allowHttp: true, allowLoopback: true };

describe('classifyAddress', () => {
  it.each<[string, AddressClass]>([
    ['93.184.216.34', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.8.9.10', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.255', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['::ffff:10.0.0.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['169.254.0.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['0.0.0.0', 'not-routable'],
    ['::', 'not-routable'],
    ['224.0.0.1', 'not-routable'],
    ['255.255.255.255', 'not-routable'],
    ['ff02::1', 'not-routable'],
    ['64:ff9b::a00:1', 'not-routable'],
    // The neighbours of the refused ranges are public.
    ['172.32.0.1', 'public'],
    ['100.128.0.1', 'public'],
    ['11.0.0.1', 'public'],
  ])('%s is %s', (ip, kind) => {
    expect(classifyAddress(ip)).toBe(kind);
  });

  it('lets loopback through only where it is allowed, and link-local nowhere', () => {
    expect(addressAllowed('loopback', testStack)).toBe(true);
    expect(addressAllowed('loopback', production)).toBe(false);
    for (const policy of [production, testStack, development]) {
      expect(addressAllowed('link-local', policy)).toBe(false);
      expect(addressAllowed('private', policy)).toBe(false);
    }
  });
});

describe('checkWebhookUrl', () => {
  const refusal = (url: string, policy: WebhookUrlPolicy) => {
    try {
      checkWebhookUrl(url, policy);
    } catch (error) {
      return error;
    }
    return null;
  };

  it.each<[string, WebhookUrlPolicy]>([
    ['https://hooks.example.com/in', production],
    ['https://93.184.216.34/in', production],
    ['http://127.0.0.1:8123/in', testStack],
    ['http://localhost:8123/in', testStack],
    ['http://[::1]:8123/in', testStack],
    ['http://hooks.example.com/in', development],
  ])('accepts %s', (url, policy) => {
    expect(refusal(url, policy)).toBeNull();
  });

  it.each<[string, WebhookUrlPolicy, string]>([
    ['http://hooks.example.com/in', production, 'must be an https URL'],
    ['http://hooks.example.com/in', testStack, 'must be an https URL'],
    ['ftp://hooks.example.com/in', development, 'must be an https URL'],
    ['https://127.0.0.1/in', production, 'names a loopback address'],
    ['https://localhost/in', production, 'names a loopback address'],
    ['https://app.localhost/in', production, 'names a loopback address'],
    ['https://2130706433/in', production, 'names a loopback address'],
    ['https://0x7f.1/in', production, 'names a loopback address'],
    ['https://[::ffff:127.0.0.1]/in', production, 'names a loopback address'],
    ['https://10.0.0.5/in', testStack, 'names a private address'],
    ['https://192.168.0.10/in', development, 'names a private address'],
    ['https://100.64.1.1/in', development, 'names a private address'],
    ['https://[fd00::1]/in', development, 'names a private address'],
    ['http://169.254.169.254/latest/meta-data/', development, 'names a link-local address'],
    ['https://169.254.169.254/', testStack, 'names a link-local address'],
    ['https://[fe80::1]/', development, 'names a link-local address'],
    ['https://0.0.0.0/', development, 'names a not-routable address'],
    ['https://user:secret@hooks.example.com/', production, 'must not carry credentials'],
    ['not a url', production, 'is not an absolute URL'],
  ])('refuses %s (%j): %s', (url, policy, why) => {
    expect(refusal(url, policy)).toEqual(problems.webhookUrlNotAllowed(why));
  });
});

describe('webhookLookup (at delivery, after DNS resolution)', () => {
  const lookup = (host: string, policy: WebhookUrlPolicy) => new Promise<unknown>((resolve) => {
    webhookLookup(policy)(host, { all: true }, (error, addresses) => resolve(error ?? addresses));
  });

  it('refuses a name that resolves to loopback unless loopback is allowed', async () => {
    expect(await lookup('localhost', production)).toBeInstanceOf(WebhookAddressRefused);
    expect(await lookup('localhost', testStack)).toEqual(expect.arrayContaining([expect.objectContaining({ address: expect.any(String) })]));
  });

  it('hands the socket only checked addresses, and the socket connects to them', async () => {
    const server = createServer((socket) => socket.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const { connect } = await import('node:net');
      const connected = await new Promise<string>((resolve, reject) => {
        const socket = connect({ host: 'localhost', port, family: 4, lookup: webhookLookup(testStack) }, () => {
          resolve(socket.remoteAddress ?? '');
          socket.destroy();
        });
        socket.on('error', reject);
      });
      expect(connected).toBe('127.0.0.1');
    } finally {
      server.close();
    }
  });
});

describe('eventTypes matching', () => {
  it.each<[string[], string, boolean]>([
    [['auth.user.created'], 'auth.user.created', true],
    [['auth.user.created'], 'auth.user.updated', false],
    [['auth.*'], 'auth.user.created', true],
    [['auth.*'], 'authz.user.created', false],
    [['auth.user.*'], 'auth.user.deleted', true],
    [['auth.user.*'], 'auth.role.changed', false],
    [['crm.*', 'auth.role.changed'], 'auth.role.changed', true],
    [['crm.contact.*'], 'crm.contact', false],
  ])('%j receives %s: %s', (selectors, type, expected) => {
    expect(endpointReceives(selectors, type)).toBe(expected);
  });
});

describe('signatures', () => {
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  const previous = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
  const body = JSON.stringify({ id: 'evt', type: 'auth.user.created', timestamp: '2026-01-01T00:00:00.000Z', data: {} });

  it('verifies with the standardwebhooks package, with either secret while both sign', () => {
    const now = new Date();
    const headers = signWebhook([secret, previous], 'evt-1', now, body);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(headers['webhook-signature'].split(' ').every((part) => part.startsWith('v1,'))).toBe(true);
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(new Webhook(previous).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(body, { ...headers })).toThrow();
  });

  it('drops the previous secret once it expired', () => {
    const now = new Date('2026-06-01T12:00:00Z');
    const endpoint = { secret, previousSecret: previous, previousSecretExpiresAt: '2026-06-01T12:00:01Z' };
    expect(signingSecrets(endpoint, now)).toEqual([secret, previous]);
    expect(signingSecrets({ ...endpoint, previousSecretExpiresAt: '2026-06-01T12:00:00Z' }, now)).toEqual([secret]);
  });
});
