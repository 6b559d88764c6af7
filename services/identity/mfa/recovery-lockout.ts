import type { Config } from '../../../common/config';

type Settings = Config['identity']['recovery'];

/** An account's failed recovery attempts; times in epoch milliseconds. */
export interface FailureState {
  windowStartedAt: number;
  windowFailures: number;
  totalFailures: number;
  lockedUntil: number | null;
}

/** invalid: an ordinary failure; recovery-locked: this failure started the lock; account-locked: the account is now locked. */
export type FailureOutcome = 'invalid' | 'recovery-locked' | 'account-locked';

/** Seconds left of a recovery lock (0 when there is none), rounded up for Retry-After. */
export function lockSecondsLeft(state: Pick<FailureState, 'lockedUntil'>, now: number): number {
  return state.lockedUntil === null ? 0 : Math.max(0, Math.ceil((state.lockedUntil - now) / 1000));
}

/**
 * docs/reference/identity.md#rule-22 and Limits: maxAttempts failures within a window of windowSeconds lock
 * recovery for lockSeconds; accountLockFailures failures since the last successful recovery (three
 * lockout cycles with the defaults) lock the account. The window starts at its first failure; a
 * lock starts a new window, so each cycle allows maxAttempts again once the lock has ended.
 */
export function afterRecoveryFailure(state: FailureState, now: number, settings: Settings): { next: FailureState; outcome: FailureOutcome } {
  const windowOpen = now - state.windowStartedAt < settings.windowSeconds * 1000;
  const windowStartedAt = windowOpen ? state.windowStartedAt : now;
  const windowFailures = (windowOpen ? state.windowFailures : 0) + 1;
  const totalFailures = state.totalFailures + 1;
  if (totalFailures >= settings.accountLockFailures) {
    return { next: { windowStartedAt: now, windowFailures: 0, totalFailures, lockedUntil: null }, outcome: 'account-locked' };
  }
  if (windowFailures >= settings.maxAttempts) {
    return {
      next: { windowStartedAt: now, windowFailures: 0, totalFailures, lockedUntil: now + settings.lockSeconds * 1000 },
      outcome: 'recovery-locked',
    };
  }
  return { next: { windowStartedAt, windowFailures, totalFailures, lockedUntil: state.lockedUntil }, outcome: 'invalid' };
}
