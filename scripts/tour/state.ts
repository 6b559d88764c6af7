import { randomBytes, randomUUID } from 'node:crypto';

// What the areas learn and hand on, and the names each run makes unique.

export const PASSWORD = 'correct-zebra-staple-41';

export interface State {
  runId: string;
  owner?: { email: string; userId: string; tenantId: string; token: string };
  member?: { userId: string; token: string; roleId: string };
  contacts?: { ada: string; charles: string; grace: string };
  files?: { png: string; text: string; eicar: string };
  /** The user created while the events area listened. */
  witnessId?: string;
}

export const uniqueEmail = (state: State, label: string) => `tour.${label}.${state.runId}.${randomBytes(3).toString('hex')}@example.test`;
export const idempotencyKey = () => ({ 'idempotency-key': randomUUID() });
export const short = (id: string) => id.slice(0, 8);
