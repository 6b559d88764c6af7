import { encodeEvent, type OutgoingEvent, type ReceivedMessage } from '../../../services/events/envelope';
import {
  attemptUpTo, DeliveryAborted, errorText, LAST_ERROR_MAX_CHARS, MAX_RETRY_PAUSE_MS, receiptExpiry, retryPause, screenMessage,
  type GroupFilter,
} from '../../../services/events/consumers/delivery-rules';
import { problems } from '../../../common/problems';

const TENANT = '01968f1e-7a7b-7cc3-a5a8-0d6f3f1e2a12';
const OTHER_TENANT = '01968f1e-7a7b-7cc3-a5a8-0d6f3f1e2a99';

const outgoing = (overrides: Partial<OutgoingEvent['envelope']> = {}): OutgoingEvent => ({
  topic: 'platform.auth.events',
  key: '01968f1e-7a7b-7cc3-a5a8-0d6f3f1e2a11',
  correlationId: null,
  envelope: {
    id: '01968f1e-7a7b-7cc3-a5a8-0d6f3f1e2a10',
    type: 'auth.user.created',
    source: 'identity',
    tenantId: TENANT,
    data: { user_id: '01968f1e-7a7b-7cc3-a5a8-0d6f3f1e2a11', email: 'ada@example.test' },
    schemaVersion: '1.0.0',
    timestamp: '2026-01-02T03:04:05.678Z',
    traceId: null,
    ...overrides,
  },
});

/** A message as a consumer receives it: bytes, with the headers given (encodeEvent's unless replaced). */
function received(event = outgoing(), headers?: Record<string, string | undefined>): ReceivedMessage {
  const { key, value, headers: encoded } = encodeEvent(event);
  const chosen = Object.entries(headers ?? encoded).filter((entry): entry is [string, string] => entry[1] !== undefined);
  return { key: Buffer.from(key), value: Buffer.from(value), headers: Object.fromEntries(chosen.map(([name, text]) => [name, Buffer.from(text)])) };
}

const headersOf = (event = outgoing()) => encodeEvent(event).headers;

const platformGroup: GroupFilter = { groupId: 'crm.user-created', tenantId: null, accepts: (type) => type === 'auth.user.created' };
const tenantGroup: GroupFilter = { groupId: `tenant.${TENANT}.crm.user-created`, tenantId: TENANT, accepts: platformGroup.accepts };

describe('screenMessage', () => {
  it.each([
    ['a platform group, any tenant', platformGroup, received(outgoing({ tenantId: OTHER_TENANT })), 'deliver'],
    ['a tenant subscription, its own tenant', tenantGroup, received(), 'deliver'],
    ['a tenant subscription, another tenant (header)', tenantGroup, received(outgoing({ tenantId: OTHER_TENANT })), 'other-tenant'],
    ['a tenant subscription, another tenant (no headers: the envelope decides)', tenantGroup, received(outgoing({ tenantId: OTHER_TENANT }), {}), 'other-tenant'],
    ['a type the group does not receive (header)', platformGroup, received(outgoing({ type: 'auth.user.logged_in' })), 'type-not-received'],
    ['a type the group does not receive (no headers)', platformGroup, received(outgoing({ type: 'auth.user.logged_in' }), {}), 'type-not-received'],
    ['a redelivery for this group', platformGroup, received(outgoing(), { ...headersOf(), redeliverTo: 'crm.user-created' }), 'deliver'],
    ['a redelivery for another group', platformGroup, received(outgoing(), { ...headersOf(), redeliverTo: 'billing.user-created' }), 'redelivered-to-another-group'],
    ['a redelivery for the same name in a tenant subscription', tenantGroup, received(outgoing(), { ...headersOf(), redeliverTo: 'crm.user-created' }), 'redelivered-to-another-group'],
    ['a value that is not JSON', platformGroup, { key: 'k', value: Buffer.from('{'), headers: {} }, 'not-an-event'],
    ['a message without a value', platformGroup, { key: 'k', value: null, headers: {} }, 'not-an-event'],
    ['a tenant header that contradicts the envelope', platformGroup, received(outgoing(), { ...headersOf(), tenantId: OTHER_TENANT }), 'not-an-event'],
    ['a type header that contradicts the envelope', platformGroup, received(outgoing({ type: 'auth.user.logged_in' }), { ...headersOf(), type: 'auth.user.created' }), 'not-an-event'],
    ['an id header that contradicts the envelope', platformGroup, received(outgoing(), { ...headersOf(), id: OTHER_TENANT }), 'not-an-event'],
  ])('%s → %s', (_, filter, message, expected) => {
    const screening = screenMessage(message, filter);
    expect(screening.kind === 'skip' ? screening.reason : screening.kind).toBe(expected);
  });

  it('hands the decoded event over, and says whether it is a redelivery', () => {
    const first = screenMessage(received(), platformGroup);
    expect(first).toEqual({ kind: 'deliver', redelivery: false, event: { key: outgoing().key, envelope: outgoing().envelope, correlationId: null } });
    const again = screenMessage(received(outgoing(), { ...headersOf(), redeliverTo: 'crm.user-created' }), platformGroup);
    expect(again).toMatchObject({ kind: 'deliver', redelivery: true });
  });

  it('hands a group the redeliveries of the names it adopts (the webhook dispatcher\'s webhooks.<endpointId>), naming the name', () => {
    const dispatcher: GroupFilter = { ...platformGroup, adopts: (name) => name.startsWith('webhooks.') };
    const adopted = screenMessage(received(outgoing(), { ...headersOf(), redeliverTo: 'webhooks.0195f3a4-0000-7000-8000-000000000001' }), dispatcher);
    expect(adopted).toMatchObject({ kind: 'deliver', redelivery: true, adoptedFor: 'webhooks.0195f3a4-0000-7000-8000-000000000001' });
    expect(screenMessage(received(outgoing(), { ...headersOf(), redeliverTo: 'billing.user-created' }), dispatcher))
      .toEqual({ kind: 'skip', reason: 'redelivered-to-another-group' });
    expect(screenMessage(received(outgoing(), { ...headersOf(), redeliverTo: 'crm.user-created' }), dispatcher)).not.toHaveProperty('adoptedFor');
  });

  it('decides another tenant\'s message by its headers, without parsing the value', () => {
    const message = { key: 'k', value: Buffer.from('not json'), headers: { tenantId: Buffer.from(OTHER_TENANT), type: Buffer.from('auth.user.created') } };
    expect(screenMessage(message, tenantGroup)).toEqual({ kind: 'skip', reason: 'other-tenant' });
  });
});

describe('receiptExpiry', () => {
  const now = new Date('2026-01-02T00:00:00.000Z');

  it.each([
    ['money.wallet.credited', null],
    ['money.hold.expired', null],
    ['auth.user.created', '2026-01-03T00:00:00.000Z'],
    ['crm.contact.created', '2026-01-03T00:00:00.000Z'],
    ['moneybox.item.created', '2026-01-03T00:00:00.000Z'],
  ])('%s → %s', (type, expected) => {
    expect(receiptExpiry(type, now, 24)).toBe(expected);
  });
});

describe('retryPause', () => {
  it('doubles from the backoff, capped', () => {
    expect([1, 2, 3, 4].map((attempt) => retryPause(attempt, 200))).toEqual([200, 400, 800, 1600]);
    expect(retryPause(30, 200)).toBe(MAX_RETRY_PAUSE_MS);
    expect(retryPause(3, 0)).toBe(0);
  });
});

describe('attemptUpTo', () => {
  const settings = (pauses: number[], extra = {}) => ({ maxAttempts: 4, retryBackoffMs: 10, sleep: async (ms: number) => { pauses.push(ms); }, ...extra });

  it('stops at the first success, pausing before each retry', async () => {
    const pauses: number[] = [];
    let calls = 0;
    const outcome = await attemptUpTo(async (n) => {
      calls += 1;
      if (n < 3) throw new Error(`failure ${n}`);
      return 'done';
    }, settings(pauses));
    expect(outcome).toEqual({ ok: true, attempts: 3, value: 'done' });
    expect(calls).toBe(3);
    expect(pauses).toEqual([10, 20]);
  });

  it('gives up after maxAttempts with the last error', async () => {
    const pauses: number[] = [];
    const beats: number[] = [];
    const outcome = await attemptUpTo(async (n) => { throw new Error(`failure ${n}`); }, settings(pauses, { beforePause: async (n: number) => { beats.push(n); } }));
    expect(outcome).toMatchObject({ ok: false, attempts: 4 });
    expect((outcome as { error: Error }).error.message).toBe('failure 4');
    expect(pauses).toEqual([10, 20, 40]);
    expect(beats).toEqual([1, 2, 3]);
  });

  it('throws DeliveryAborted on at once: the destination is gone, not the event broken', async () => {
    let calls = 0;
    await expect(attemptUpTo(async () => { calls += 1; throw new DeliveryAborted('stream closed'); }, settings([]))).rejects.toBeInstanceOf(DeliveryAborted);
    expect(calls).toBe(1);
  });

  it('makes no further attempt once the consumer is stopping, leaving the event to the next member', async () => {
    let stopping = false;
    const attempt = async () => { stopping = true; throw new Error('failed'); };
    await expect(attemptUpTo(attempt, settings([], { shouldContinue: () => !stopping }))).rejects.toBeInstanceOf(DeliveryAborted);
  });
});

describe('errorText', () => {
  it('names a problem by its type and an error by its name, never with the stack', () => {
    expect(errorText(problems.validation([{ field: 'age', code: 'OUT_OF_RANGE', message: 'no' }], 'The contacts record is not valid')))
      .toBe('validation-error: The contacts record is not valid');
    expect(errorText(new TypeError('boom'))).toBe('TypeError: boom');
    expect(errorText('plain')).toBe('plain');
  });

  it('keeps at most LAST_ERROR_MAX_CHARS characters', () => {
    const text = errorText(new Error('x'.repeat(5000)));
    expect(text).toHaveLength(LAST_ERROR_MAX_CHARS);
    expect(text.endsWith('…')).toBe(true);
  });
});
