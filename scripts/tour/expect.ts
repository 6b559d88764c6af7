import { StepFailed, Unavailable } from './failures';
import type { Answer } from './http';

// The expectations a step checks of an answer; each failure message is what the step's line prints.

export interface Problem {
  type?: string;
  status?: number;
  detail?: string;
}

/** At most 300 characters of an answer, on one line, with the request id that finds it in the gateway's logs. */
export function brief(answer: Answer<unknown>): string {
  const text = answer.bytes.toString('utf8').replace(/\s+/g, ' ');
  const id = answer.headers.get('x-request-id');
  return `${text.length > 300 ? `${text.slice(0, 300)}…` : text}${id ? ` (request ${id})` : ''}`;
}

export function expectStatus(answer: Answer<unknown>, ...statuses: number[]): void {
  if (statuses.includes(answer.status)) return;
  const failure = `expected ${statuses.join(' or ')}, got ${answer.status} ${brief(answer)}`;
  throw [502, 503, 504].includes(answer.status) ? new Unavailable(failure) : new StepFailed(failure);
}

/** The problem type's suffix (`forbidden` of https://problems…/forbidden). */
export function problemOf(answer: Answer<unknown>): string | undefined {
  const body = answer.body as Problem | null;
  return typeof body === 'object' && body !== null ? body.type?.split('/').pop() : undefined;
}

export function expectProblem(answer: Answer<unknown>, status: number, type: string): void {
  expectStatus(answer, status);
  if (problemOf(answer) !== type) throw new StepFailed(`expected the problem ${type}, got ${brief(answer)}`);
}

/** JSON with every object's keys sorted: a stored answer replayed may list its keys in another order. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => (inner && typeof inner === 'object' && !Array.isArray(inner)
    ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    : inner));
}

export function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new StepFailed(message);
}
