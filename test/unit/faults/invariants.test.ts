import { judgeExactlyOnce, judgeMovements, judgeReplays, judgeWorkflows } from '../../../bench/faults/invariants';

/**
 * The judges of `npm run faults` (bench/faults/invariants.ts) fail on what a broken platform would
 * leave behind, and pass on what a sound one leaves: a run reporting 0 violations means something.
 */
describe('the invariants of a faults run', () => {
  it('an Idempotency-Key answered otherwise, or not at all, when sent again', () => {
    expect(judgeReplays([
      { key: 'k1', path: '/transfers', first: 't1', again: 't1' },
      { key: 'k2', path: '/transfers', first: 't2', again: 't9' },
      { key: 'k3', path: '/events/publish', first: 'e3', again: undefined },
    ])).toEqual([
      'key k2 (/transfers) answered t9 again, first t2',
      'key k3 (/events/publish) answered nothing again, first e3',
    ]);
  });

  it('a key that moved a wallet twice', () => {
    expect(judgeMovements([{ key: 'k1', walletId: 'w1', rows: 1 }, { key: 'k2', walletId: 'w2', rows: 2 }]))
      .toEqual(['key k2 moved wallet w2 2 times']);
  });

  it('an accepted audit record or event effect lost, or stored twice', () => {
    const counts = new Map([['a1', 1], ['a2', 0], ['a3', 2]]);
    expect(judgeExactlyOnce('audit record', ['a1', 'a2', 'a3', 'a4'], counts)).toEqual([
      'audit record a2 is missing', 'audit record a3 is there 2 times', 'audit record a4 is missing',
    ]);
  });

  it('a workflow left running with nothing ahead of it', () => {
    expect(judgeWorkflows([
      { workflowId: 'money.hold:t:k1', type: 'moneyHold', rightlyWaiting: true },
      { workflowId: 'money.transfer:t:k2', type: 'moneyTransfer', rightlyWaiting: false },
    ])).toEqual(['workflow money.transfer:t:k2 (moneyTransfer) is still running']);
  });

  it('nothing to say of a sound run', () => {
    expect([
      ...judgeReplays([{ key: 'k', path: '/transfers', first: 't', again: 't' }]),
      ...judgeMovements([{ key: 'k', walletId: 'w', rows: 1 }]),
      ...judgeExactlyOnce('crm contact of the new user', ['a@example.test'], new Map([['a@example.test', 1]])),
      ...judgeWorkflows([{ workflowId: 'subscription:t', type: 'subscriptionLifecycle', rightlyWaiting: true }]),
    ]).toEqual([]);
  });
});
