// kafkajs 2.2.4 made every broker connection spin a 1 ms timer forever once it had sent a request
// (tulios/kafkajs#1556, #1704): CPU and wake-ups in every gateway listener, relay and consumer.
// patches/kafkajs+2.2.4.patch (applied by npm's postinstall) stops that; this keeps the patch in place.
interface Entry { correlationId: number; resolve(response: unknown): void; reject(error: unknown): void }

// eslint-disable-next-line @typescript-eslint/no-require-imports -- kafkajs's internal module has no types; the cast states the shape used
const RequestQueue = require('kafkajs/src/network/requestQueue') as new (options: Record<string, unknown>) => {
  push(request: { entry: Entry; expectResponse: boolean; sendRequest(): void }): void;
  fulfillRequest(response: { correlationId: number; payload: Buffer; size: number }): void;
  destroy(): void;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  pending: unknown[];
};

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const logger = { ...silent, namespace: () => silent };

function queue(maxInFlightRequests: number) {
  return new RequestQueue({ maxInFlightRequests, requestTimeout: 30_000, enforceRequestTimeout: false, clientId: 'test', broker: 'b:9092', logger });
}

const request = (correlationId: number, sent: number[]) => ({
  entry: { correlationId, resolve: () => undefined, reject: () => undefined }, expectResponse: true, sendRequest: () => sent.push(correlationId),
});
const response = (correlationId: number) => ({ correlationId, payload: Buffer.alloc(0), size: 0 });

describe('kafkajs request queue (patched)', () => {
  it('schedules no check once a response leaves nothing pending', () => {
    const requests = queue(1);
    const sent: number[] = [];
    requests.push(request(1, sent));
    requests.fulfillRequest(response(1));
    expect(sent).toEqual([1]);
    expect(requests.throttleCheckTimeoutId).toBeNull();
    requests.destroy();
  });

  it('still sends a request that had to wait, when the one in flight is answered', () => {
    const requests = queue(1);
    const sent: number[] = [];
    requests.push(request(1, sent));
    requests.push(request(2, sent));
    expect(sent).toEqual([1]);
    expect(requests.throttleCheckTimeoutId).not.toBeNull();
    requests.fulfillRequest(response(1));
    expect(sent).toEqual([1, 2]);
    expect(requests.pending).toHaveLength(0);
    requests.destroy();
  });
});
