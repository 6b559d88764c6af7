import { afterRecoveryFailure, lockSecondsLeft, type FailureState } from '../../../services/identity/mfa/recovery-lockout';

/** docs/reference/identity.md#rule-22: 5 wrong recovery codes in 15 minutes lock recovery for an hour; 15 lock the account. */
const SETTINGS = { maxAttempts: 5, windowSeconds: 900, lockSeconds: 3600, accountLockFailures: 15 };
const MINUTE = 60_000;
const fresh = (now: number): FailureState => ({ windowStartedAt: now, windowFailures: 0, totalFailures: 0, lockedUntil: null });

/** Fails `count` times, `everyMs` apart, returning the outcomes and the last state. */
function failRepeatedly(state: FailureState, start: number, count: number, everyMs = 1000) {
  const outcomes: string[] = [];
  let current = state;
  for (let i = 0; i < count; i += 1) {
    const { next, outcome } = afterRecoveryFailure(current, start + i * everyMs, SETTINGS);
    outcomes.push(outcome);
    current = next;
  }
  return { outcomes, state: current };
}

describe('recovery lockout', () => {
  const t0 = Date.parse('2026-01-01T00:00:00Z');

  it('locks recovery for an hour at the fifth failure within the window', () => {
    const { outcomes, state } = failRepeatedly(fresh(t0), t0, 5);
    expect(outcomes).toEqual(['invalid', 'invalid', 'invalid', 'invalid', 'recovery-locked']);
    expect(state.lockedUntil).toBe(t0 + 4000 + 3600_000);
    expect(lockSecondsLeft(state, t0 + 4000)).toBe(3600);
    expect(lockSecondsLeft(state, t0 + 4000 + 3600_000)).toBe(0);
  });

  it('starts counting afresh when the 15-minute window has passed', () => {
    const first = failRepeatedly(fresh(t0), t0, 4);
    const later = failRepeatedly(first.state, t0 + 16 * MINUTE, 4);
    expect(later.outcomes).toEqual(['invalid', 'invalid', 'invalid', 'invalid']);
    expect(later.state.totalFailures).toBe(8);
  });

  it('locks the account at the fifteenth failure: the third lockout cycle', () => {
    let state = fresh(t0);
    const outcomes: string[] = [];
    for (let cycle = 0; cycle < 3; cycle += 1) {
      const result = failRepeatedly(state, t0 + cycle * 2 * 3600_000, 5);
      outcomes.push(...result.outcomes);
      state = result.state;
    }
    expect(outcomes.filter((outcome) => outcome === 'recovery-locked')).toHaveLength(2);
    expect(outcomes[14]).toBe('account-locked');
    expect(state.totalFailures).toBe(15);
  });

  it('counts failures spread over windows towards the account lock', () => {
    let state = fresh(t0);
    let last = '';
    for (let i = 0; i < 15; i += 1) {
      ({ next: state, outcome: last } = afterRecoveryFailure(state, t0 + i * 20 * MINUTE, SETTINGS));
    }
    expect(last).toBe('account-locked');
  });
});
