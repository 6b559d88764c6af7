import { EVENT_HEADERS, EventDecodeError, decodeEvent, encodeEvent, headerValue, type OutgoingEvent } from '../../../services/events/envelope';

const event: OutgoingEvent = {
  topic: 'platform.money.events',
  key: '01968f1e-7a7b-7cc3-a5a8-0d6f3f1e2a11',
  correlationId: 'saga-42',
  envelope: {
    id: '01968f1e-7a7b-7cc3-a5a8-0d6f3f1e2a10',
    type: 'money.wallet.credited',
    source: 'money',
    tenantId: '01968f1e-7a7b-7cc3-a5a8-0d6f3f1e2a12',
    data: { walletId: '01968f1e-7a7b-7cc3-a5a8-0d6f3f1e2a11', amount: 1500, currency: 'USD' },
    schemaVersion: '1.0.0',
    timestamp: '2026-01-02T03:04:05.678Z',
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  },
};

describe('encodeEvent', () => {
  it('puts exactly the documented members in the value, in order, with the tenant beside the payload', () => {
    const { value } = encodeEvent(event);
    expect(Object.keys(JSON.parse(value))).toEqual(['id', 'type', 'source', 'tenantId', 'data', 'schemaVersion', 'timestamp', 'traceId']);
    expect(JSON.parse(value)).toEqual(event.envelope);
    expect(JSON.parse(value).data).not.toHaveProperty('tenantId');
  });

  it('keys the message by the entity id and addresses the topic', () => {
    const message = encodeEvent(event);
    expect(message.key).toBe(event.key);
    expect(message.topic).toBe('platform.money.events');
  });

  it('repeats id, type, tenant, trace and correlation in headers for filtering without parsing', () => {
    expect(encodeEvent(event).headers).toEqual({
      id: event.envelope.id,
      type: 'money.wallet.credited',
      tenantId: event.envelope.tenantId,
      traceId: event.envelope.traceId,
      correlationId: 'saga-42',
    });
  });

  it('leaves out the trace and correlation headers when there are none, and says traceId null in the value', () => {
    const message = encodeEvent({ ...event, correlationId: null, envelope: { ...event.envelope, traceId: null } });
    expect(Object.keys(message.headers)).toEqual([EVENT_HEADERS.id, EVENT_HEADERS.type, EVENT_HEADERS.tenantId]);
    expect(JSON.parse(message.value).traceId).toBeNull();
  });
});

describe('decodeEvent', () => {
  const received = () => {
    const { key, value, headers } = encodeEvent(event);
    return {
      key: Buffer.from(key),
      value: Buffer.from(value),
      headers: Object.fromEntries(Object.entries(headers).map(([name, text]) => [name, Buffer.from(text)])),
    };
  };

  it('reads back what encodeEvent wrote, from bytes as a consumer receives them', () => {
    expect(decodeEvent(received())).toEqual({ key: event.key, envelope: event.envelope, correlationId: 'saga-42' });
  });

  it('reads a header as text, the first of repeated values, undefined when absent', () => {
    const message = { ...received(), headers: { tenantId: [Buffer.from('a'), Buffer.from('b')] } };
    expect(headerValue(message, 'tenantId')).toBe('a');
    expect(headerValue(message, 'traceId')).toBeUndefined();
  });

  it.each([
    ['a null value (tombstone)', { value: null }],
    ['a value that is not JSON', { value: Buffer.from('{nope') }],
    ['a member missing', { value: Buffer.from(JSON.stringify({ ...event.envelope, source: undefined })) }],
    ['an extra member', { value: Buffer.from(JSON.stringify({ ...event.envelope, tenant_id: 'x' })) }],
    ['a bad event type', { value: Buffer.from(JSON.stringify({ ...event.envelope, type: 'Money.Credited' })) }],
    ['a bad schema version', { value: Buffer.from(JSON.stringify({ ...event.envelope, schemaVersion: 'v1' })) }],
    ['a timestamp that is not ISO 8601', { value: Buffer.from(JSON.stringify({ ...event.envelope, timestamp: 'yesterday' })) }],
  ])('refuses %s', (_case, change) => {
    expect(() => decodeEvent({ ...received(), ...change })).toThrow(EventDecodeError);
  });
});
