import { setTimeout as sleep } from 'node:timers/promises';
import { newId } from '../../common/ids';
import { moneyCall } from '../../bench/lib/money';

/**
 * The overload scenario of issue 19, shared by the fault test (test/api/money/overload-burst.test.ts)
 * and its bench (bench/money-overload.bench.ts), which differ only in where the gateway runs and how they fund
 * the wallets: one tenant sends a burst of transfers all at once while another makes steady
 * transfers. Burst clients behave as a polite client does: a 429 is retried after its Retry-After,
 * growing, with jitter, so the refused do not come back in step; a 202 is the answer (the job goes
 * on). Afterwards every key is replayed until it answers its transaction.
 */

/** An answer as the scenario reads it, whichever HTTP client made the call. */
export interface OverloadAnswer {
  status: number;
  body: Record<string, unknown>;
  /** Retry-After, in seconds, when the answer carried one. */
  retryAfter?: number;
}

export type OverloadSend = (token: string, path: string, body: Record<string, unknown>, key: string) => Promise<OverloadAnswer>;

export interface OverloadTenant {
  token: string;
  /** Wallets of the tenant in USD, funded for every transfer of 1 the scenario makes. */
  wallets: string[];
}

export interface OverloadOptions {
  send: OverloadSend;
  /**
   * An even number of wallets: transfer i moves from wallet 2i to wallet 2i + 1 (modulo their number),
   * so as many transfers as there are pairs lock disjoint wallets.
   */
  burst: OverloadTenant;
  /** Two wallets per steady client; each client moves money back and forth between its pair. */
  steady: OverloadTenant;
  burstSize: number;
  steadyClients: number;
  /** The pause of a steady client between its transfers. */
  steadyPauseMs: number;
}

export interface OverloadOutcome {
  /** Every answer the burst's requests got, retries of 429 included, counted by status. */
  burstStatuses: Record<number, number>;
  /** Every answer the steady tenant got to the transfers it started during the burst, counted by status. */
  steadyStatuses: Record<number, number>;
  /** The steady tenant's latencies during the burst in ms, ascending. */
  steadyLatencies: number[];
  /** Each key of either tenant with the transaction replaying it answers. */
  transactions: Map<string, Record<string, unknown>>;
  burstKeys: string[];
  steadyKeys: string[];
}

interface Request {
  token: string;
  key: string;
  body: Record<string, unknown>;
}

/** Transfers each steady client makes before the burst starts. */
const WARM_UP_TRANSFERS = 3;

const transfer = (fromWalletId: string, toWalletId: string) => ({ fromWalletId, toWalletId, amount: 1, currency: 'USD', reason: 'overload' });

export async function runOverloadScenario(options: OverloadOptions): Promise<OverloadOutcome> {
  const { send, burst, steady } = options;
  const count = (statuses: Record<number, number>, status: number) => { statuses[status] = (statuses[status] ?? 0) + 1; };
  const burstStatuses: Record<number, number> = {};
  const steadyStatuses: Record<number, number> = {};
  const steadyLatencies: number[] = [];
  const burstRequests: Request[] = Array.from({ length: options.burstSize }, (_, i) => ({
    token: burst.token, key: newId(), body: transfer(burst.wallets[(2 * i) % burst.wallets.length], burst.wallets[(2 * i + 1) % burst.wallets.length]),
  }));
  const steadyRequests: Request[] = [];

  // The steady tenant is at work before the burst arrives (its first transfers warm the caches, the
  // connections and the worker's workflow cache), and its latencies count from the burst's start.
  let warming = options.steadyClients;
  let warmedUp: () => void = () => undefined;
  const warm = new Promise<void>((resolve) => { warmedUp = resolve; });
  if (warming === 0) warmedUp();
  let bursting = true;
  let burstStarted = Number.POSITIVE_INFINITY;
  const burstDone = warm.then(() => Promise.all(burstRequests.map(async (request) => {
    burstStarted = Math.min(burstStarted, performance.now());
    for (let refusals = 0; ; refusals += 1) {
      const answer = await send(request.token, '/transfers', request.body, request.key);
      count(burstStatuses, answer.status);
      if (answer.status !== 429) return;
      await sleep(backoffMs(answer.retryAfter, refusals));
    }
  }))).finally(() => { bursting = false; });

  const steadyDone = Promise.all(Array.from({ length: options.steadyClients }, async (_, client) => {
    const [a, b] = steady.wallets.slice(client * 2, client * 2 + 2);
    for (let step = 0; bursting; step += 1) {
      const request = { token: steady.token, key: newId(), body: step % 2 === 0 ? transfer(a, b) : transfer(b, a) };
      steadyRequests.push(request);
      const started = performance.now();
      const answer = await send(request.token, '/transfers', request.body, request.key);
      if (started >= burstStarted) {
        steadyLatencies.push(performance.now() - started);
        count(steadyStatuses, answer.status);
      } else if (answer.status !== 200) {
        throw new Error(`a warm-up transfer answered ${answer.status}: ${JSON.stringify(answer.body)}`);
      }
      if (step + 1 === WARM_UP_TRANSFERS && --warming === 0) warmedUp();
      await sleep(options.steadyPauseMs);
    }
  }));
  await Promise.all([burstDone, steadyDone]);
  steadyLatencies.sort((x, y) => x - y);

  const transactions = await replayAll(send, [...burstRequests, ...steadyRequests]);
  return {
    burstStatuses, steadyStatuses, steadyLatencies, transactions,
    burstKeys: burstRequests.map((request) => request.key), steadyKeys: steadyRequests.map((request) => request.key),
  };
}

/** Retry-After, doubled per refusal up to 8 times, with up to as much again of jitter. */
function backoffMs(retryAfter: number | undefined, refusals: number): number {
  return (retryAfter ?? 1) * 1000 * Math.min(2 ** refusals, 8) * (1 + Math.random());
}

/**
 * Every key replayed with its request until it answers 200: its transaction. A key whose workflow
 * still runs answers 202 again at the deadline, or waits for it; a 429 waits its Retry-After. A few
 * at a time, so the replays do not become a burst of their own.
 */
async function replayAll(send: OverloadSend, requests: Request[]): Promise<Map<string, Record<string, unknown>>> {
  const transactions = new Map<string, Record<string, unknown>>();
  const queue = [...requests];
  await Promise.all(Array.from({ length: 8 }, async () => {
    for (let request = queue.shift(); request; request = queue.shift()) {
      for (let refusals = 0; ; refusals += 1) {
        const answer = await send(request.token, '/transfers', request.body, request.key);
        if (answer.status === 200) {
          transactions.set(request.key, answer.body);
          break;
        }
        if (answer.status !== 202 && answer.status !== 429) throw new Error(`replaying ${request.key} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
        await sleep(backoffMs(answer.retryAfter, Math.min(refusals, 2)));
      }
    }
  }));
  return transactions;
}

/**
 * The scenario's requests over node:http (bench/lib/money.ts moneyCall), for the fault test and the
 * bench alike: idle sockets are dropped before the server's keep-alive timeout could close them under
 * a request, and a request that still meets a reused socket closing is sent once more (its
 * Idempotency-Key makes that safe). fetch's pool has no such rule: right after a burst of 500, CI
 * met a run of closed pooled sockets that no pause between retries cleared.
 */
export function overloadSend(baseUrl: string): OverloadSend {
  const call = moneyCall(baseUrl);
  return async (token, path, body, key) => {
    const answer = await call('POST', path, body, token, key);
    const retryAfter = answer.headers['retry-after'];
    return { status: answer.status, body: answer.body as Record<string, unknown>, retryAfter: retryAfter === undefined ? undefined : Number(retryAfter) };
  };
}
