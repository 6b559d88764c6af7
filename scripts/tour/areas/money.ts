import { brief, canonical, check, expectProblem, expectStatus } from '../expect';
import { StepFailed } from '../failures';
import { followJob } from '../follow-job';
import type { Answer, Http } from '../http';
import { idempotencyKey, short, type State } from '../state';
import type { Tour } from '../steps';

// Wallets, an idempotent credit, a transfer and a confirmed hold, each balance checked.

interface Transaction {
  transactionId: string;
  id?: string;
  type: string;
  status: string;
  amount: number;
  balanceAfter: { available: number; pending: number; frozen: number };
}

/** A money answer: the transaction at once (200), or a job to follow (202) until it completes. */
async function settled(http: Http, answer: Answer<Transaction | { jobId: string }>, token: string): Promise<{ transaction: Transaction; how: string }> {
  expectStatus(answer, 200, 202);
  if (answer.status === 200) return { transaction: answer.body as Transaction, how: '200' };
  const { jobId } = answer.body as { jobId: string };
  const job = await followJob(http, jobId, token);
  if (job.status !== 'completed') throw new StepFailed(`job ${jobId} ended ${job.status}: ${JSON.stringify(job.error ?? job)}`);
  return { transaction: job.result as unknown as Transaction, how: `202 → job ${jobId} completed` };
}

export async function money(tour: Tour, http: Http, state: State): Promise<void> {
  const owner = state.owner;
  await tour.area('money', owner ? null : 'needs the verified owner of identity', async (step) => {
    const { token, userId } = owner!;
    const wallets = { a: '', b: '' };
    interface Wallet { id: string; currency: string; balance: Transaction['balanceAfter'] }
    for (const label of ['a', 'b'] as const) {
      await step(`create wallet ${label.toUpperCase()}`, async () => {
        const answer = await http.post<Wallet>('/v1/wallets', { userId, currency: 'EUR', label: `tour-${label}` }, token);
        expectStatus(answer, 201);
        check(answer.body.balance.available === 0, `expected an empty wallet, got ${brief(answer)}`);
        wallets[label] = answer.body.id;
        return `201 ${answer.body.id} EUR`;
      });
    }
    const creditKey = idempotencyKey();
    const credit = { amount: 10_000, currency: 'EUR', reason: 'tour top-up' };
    let credited: Transaction | undefined;
    await step('credit A 100.00 with an Idempotency-Key', async () => {
      const answer = await http.post<Transaction>(`/v1/wallets/${wallets.a}/credit`, credit, token, creditKey);
      expectStatus(answer, 200);
      credited = answer.body;
      check(credited.type === 'credit' && credited.status === 'completed' && credited.balanceAfter.available === 10_000,
        `expected a completed credit leaving 10000, got ${brief(answer)}`);
      return `200 ${credited.type} ${credited.status}, available 10000`;
    });
    await step('the same key and body answer the same', async () => {
      const answer = await http.post<Transaction>(`/v1/wallets/${wallets.a}/credit`, credit, token, creditKey);
      expectStatus(answer, 200);
      check(canonical(answer.body) === canonical(credited), `expected the first answer again, got ${brief(answer)}`);
      const balance = await http.get<Transaction['balanceAfter']>(`/v1/wallets/${wallets.a}/balance`, token);
      expectStatus(balance, 200);
      check(balance.body.available === 10_000, `expected the balance credited once (10000), got ${brief(balance)}`);
      return `200 transaction ${short(credited!.transactionId)} again, credited once`;
    });
    await step('the same key with another body is 409', async () => {
      expectProblem(await http.post(`/v1/wallets/${wallets.a}/credit`, { ...credit, amount: 1 }, token, creditKey), 409, 'idempotency-conflict');
      return '409 idempotency-conflict';
    });
    const transferKey = idempotencyKey();
    const transferBody = { fromWalletId: wallets.a, toWalletId: wallets.b, amount: 2_500, currency: 'EUR', reason: 'tour transfer' };
    let transferred: Transaction | undefined;
    await step('transfer 25.00 from A to B', async () => {
      const { transaction, how } = await settled(http, await http.post('/v1/transfers', transferBody, token, transferKey), token);
      check(transaction.type === 'transfer' && transaction.status === 'completed', `expected a completed transfer, got ${JSON.stringify(transaction)}`);
      transferred = transaction;
      return `${how}, ${transaction.status}`;
    });
    await step('the transfer repeated with its key answers the same', async () => {
      const { transaction } = await settled(http, await http.post('/v1/transfers', transferBody, token, transferKey), token);
      check(transaction.transactionId === transferred!.transactionId, `expected transaction ${transferred!.transactionId}, got ${transaction.transactionId}`);
      return `200 transaction ${short(transaction.transactionId)} again`;
    });
    const balances = async (expected: Record<'a' | 'b', Transaction['balanceAfter']>) => {
      for (const label of ['a', 'b'] as const) {
        const answer = await http.get<Transaction['balanceAfter']>(`/v1/wallets/${wallets[label]}/balance`, token);
        expectStatus(answer, 200);
        check(canonical(answer.body) === canonical(expected[label]), `expected ${label.toUpperCase()} ${JSON.stringify(expected[label])}, got ${brief(answer)}`);
      }
      return `200 A ${expected.a.available}, B ${expected.b.available}`;
    };
    await step('balances after the transfer', () => balances({ a: { available: 7_500, pending: 0, frozen: 0 }, b: { available: 2_500, pending: 0, frozen: 0 } }));
    let hold: Transaction | undefined;
    await step('hold 10.00 on A', async () => {
      const { transaction, how } = await settled(http, await http.post(`/v1/wallets/${wallets.a}/hold`, { amount: 1_000, currency: 'EUR', ttl: '10m', reason: 'tour hold' }, token, idempotencyKey()), token);
      check(transaction.status === 'held' && transaction.balanceAfter.frozen === 1_000, `expected held with 1000 frozen, got ${JSON.stringify(transaction)}`);
      hold = transaction;
      return `${how}, held, frozen 1000`;
    });
    await step('confirm the hold', async () => {
      const { transaction, how } = await settled(http, await http.post(`/v1/holds/${hold!.transactionId}/confirm`, {}, token, idempotencyKey()), token);
      check(transaction.balanceAfter.frozen === 0 && transaction.balanceAfter.available === 6_500, `expected 6500 available and nothing frozen, got ${JSON.stringify(transaction)}`);
      return `${how}, ${transaction.type} ${transaction.status}`;
    });
    await step('balances after the hold', () => balances({ a: { available: 6_500, pending: 0, frozen: 0 }, b: { available: 2_500, pending: 0, frozen: 0 } }));
  });
}
