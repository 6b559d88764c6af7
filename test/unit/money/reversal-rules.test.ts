import { reversalRefusal } from '../../../services/money/reversal';
import type { TransactionRow } from '../../../db/queries/money/transactions.queries';

/** The reversal rules of docs/reference/money.md#rule-10, as a table. */
const NOW = new Date('2026-06-01T00:00:00Z');
const daysAgo = (days: number) => new Date(NOW.getTime() - days * 86_400_000).toISOString();
const row = (type: TransactionRow['type'], status: TransactionRow['status'], createdAt = daysAgo(1), reversed = false) =>
  ({ id: 'tx', type, status, createdAt, reversed } as TransactionRow);

it.each([
  ['a completed debit', row('debit', 'completed'), null],
  ['a confirmed hold', row('hold', 'confirmed'), null],
  ['a debit 365 days old', row('debit', 'completed', daysAgo(365)), null],
  ['a debit 366 days old', row('debit', 'completed', daysAgo(366)), 'reversal-window-expired'],
  ['a held hold', row('hold', 'held'), 'hold-not-reversible'],
  ['a reversed debit', row('debit', 'reversed', daysAgo(1), true), 'double-reversal'],
  ['a reversed debit, however old', row('debit', 'reversed', daysAgo(900), true), 'double-reversal'],
  ['a canceled hold', row('hold', 'canceled'), 'transaction-not-reversible'],
  ['a credit', row('credit', 'completed'), 'transaction-not-reversible'],
  ['a transfer', row('transfer', 'completed'), 'transaction-not-reversible'],
  ['a reversal', row('reversal', 'completed'), 'transaction-not-reversible'],
  ['a confirm', row('confirm', 'completed'), 'transaction-not-reversible'],
])('%s → %s', (_name, original, refusal) => {
  const problem = reversalRefusal(original, 365, NOW);
  if (refusal === null) expect(problem).toBeNull();
  else expect(problem).toMatchObject({ type: refusal, status: 400 });
});
