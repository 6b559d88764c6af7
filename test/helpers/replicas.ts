import { setTimeout as sleep } from 'node:timers/promises';
import { startTestGateway, type TestGateway } from './app';
import type { JsonResponse } from './http';
import { waitFor } from './http';

/**
 * Two gateway replicas for test/api/replicas/: two runtimes of their own (caches, LISTEN connection,
 * Kafka consumer groups, pools) on the one PostgreSQL, Redis, Kafka and Temporal, as two gateway
 * processes behind the load balancer are. A change is made through `a` and checked through `b`.
 */
export interface Replicas {
  a: TestGateway;
  b: TestGateway;
  close(): Promise<void>;
}

export async function startReplicas(env: Record<string, string> = {}, only: { a?: Record<string, string>; b?: Record<string, string> } = {}): Promise<Replicas> {
  const [a, b] = await Promise.all([
    startTestGateway({ env: { ...env, ...only.a }, waitUntilReady: true }),
    startTestGateway({ env: { ...env, ...only.b }, waitUntilReady: true }),
  ]);
  return { a, b, close: async () => { await Promise.all([a.close(), b.close()]); } };
}

/**
 * Waits until the gateway hears every announcement its caches follow: the LISTEN connection
 * (RBAC versions, /auth/me answers, flags) and the Kafka consumers, which read from the latest offset
 * and so miss what was published before they joined.
 */
export async function untilFollowing(gateway: TestGateway): Promise<void> {
  const { runtime } = gateway;
  await Promise.all([
    runtime.access.roleChanges.joined, runtime.modules.changes.joined, runtime.gateway.limits?.listener.joined,
    waitFor('the gateway to LISTEN', async () => runtime.announcements.isListening, 15_000, 20),
  ]);
}

/** The promise: a change made through one gateway binds every other within 1 s. */
export const PROMISED_MS = 1_000;
/** What the tests allow: the promise plus slack for CI's two shared, busy cores. */
export const ENFORCED_WITHIN_MS = 3_000;
const POLL_EVERY_MS = 50;

/** The delays measured in a file, printed once at its end (the test output's record of the promise). */
export class EnforcementDelays {
  private readonly measured: string[] = [];

  /**
   * Sends `request` about every 50 ms until `enforced` holds for its answer, and answers the time from
   * `since` (the change committed: gateway A answered it) to the sending of the first request that
   * showed it. Fails after ENFORCED_WITHIN_MS naming the last answer.
   */
  async measure<T>(what: string, since: number, request: () => Promise<JsonResponse<T>>, enforced: (answer: JsonResponse<T>) => boolean): Promise<number> {
    for (;;) {
      const sentAt = Date.now();
      const answer = await request();
      if (enforced(answer)) {
        const delay = sentAt - since;
        this.measured.push(`${what}: ${delay} ms`);
        return delay;
      }
      if (Date.now() - since > ENFORCED_WITHIN_MS) {
        throw new Error(`${what}: not enforced ${ENFORCED_WITHIN_MS} ms after the change; last answer ${answer.status} ${JSON.stringify(answer.body)}`);
      }
      await sleep(Math.max(0, POLL_EVERY_MS - (Date.now() - sentAt)));
    }
  }

  print(title: string): void {
    if (this.measured.length > 0) console.log(`${title} (promise ${PROMISED_MS} ms, allowed ${ENFORCED_WITHIN_MS} ms):\n  ${this.measured.join('\n  ')}`);
  }
}

