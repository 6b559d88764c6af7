import { Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import type { Logger } from '../../common/logger';
import { isProblem, problems, type Problem, type ProblemType } from '../../common/problems';

/**
 * The one table from the platform's problems to gRPC status codes: the gRPC → HTTP mapping
 * read the other way, by the problem's HTTP status. The event bus's codes
 * (docs/reference/events.md#errors) follow from it:
 *
 * | Problem (HTTP)                                                        | gRPC status        |
 * |-----------------------------------------------------------------------|--------------------|
 * | validation-error, event-payload-too-large, invalid-schema-version (400) | INVALID_ARGUMENT |
 * | unauthorized, token-expired (401)                                     | UNAUTHENTICATED    |
 * | forbidden, event-topic-protected, event-not-declared (403)            | PERMISSION_DENIED  |
 * | not-found (404): an unknown topic or event type                       | NOT_FOUND          |
 * | conflict, idempotency-conflict (409)                                  | ALREADY_EXISTS     |
 * | rate-limit-exceeded (429), payload-too-large (413)                    | RESOURCE_EXHAUSTED |
 * | events-broker-unavailable, service-unavailable (503)                  | UNAVAILABLE        |
 * | gateway-timeout (504)                                                 | DEADLINE_EXCEEDED  |
 * | dead-letter-not-retryable (400, by type: STATUS_BY_TYPE)              | FAILED_PRECONDITION |
 * | consumer-group-conflict (409, by type)                                | FAILED_PRECONDITION |
 * | plan-limit-exceeded (402, by type): the day's eventsPerDay reached     | RESOURCE_EXHAUSTED |
 * | replay-out-of-range (400, by type)                                    | OUT_OF_RANGE       |
 * | event-subscribe-not-declared (403)                                    | PERMISSION_DENIED  |
 * | anything else, internal-error (500)                                   | INTERNAL           |
 */
const STATUS_BY_HTTP: Readonly<Record<number, GrpcStatus>> = {
  400: GrpcStatus.INVALID_ARGUMENT,
  401: GrpcStatus.UNAUTHENTICATED,
  403: GrpcStatus.PERMISSION_DENIED,
  404: GrpcStatus.NOT_FOUND,
  409: GrpcStatus.ALREADY_EXISTS,
  413: GrpcStatus.RESOURCE_EXHAUSTED,
  429: GrpcStatus.RESOURCE_EXHAUSTED,
  503: GrpcStatus.UNAVAILABLE,
  504: GrpcStatus.DEADLINE_EXCEEDED,
};

/**
 * Problems whose gRPC status docs/reference/events.md#errors names although no HTTP status maps to it: they
 * answer their HTTP status over REST and this status over gRPC.
 */
const STATUS_BY_TYPE: Partial<Readonly<Record<ProblemType, GrpcStatus>>> = {
  // DLQRetry of a resolved or expired record (400 over REST, docs/decisions/events.md, Dead letters).
  'dead-letter-not-retryable': GrpcStatus.FAILED_PRECONDITION,
  // ReplayFrom before the topic's retention (400 over REST).
  'replay-out-of-range': GrpcStatus.OUT_OF_RANGE,
  // A group that reads another topic, or still has members in another gateway (409 over REST).
  'consumer-group-conflict': GrpcStatus.FAILED_PRECONDITION,
  // A publish past the plan's eventsPerDay (402 over REST): a quota used up, as gRPC names it; the problem-type
  // metadata tells it from a rate limit (docs/decisions/billing.md, Counting published events).
  'plan-limit-exceeded': GrpcStatus.RESOURCE_EXHAUSTED,
};

export function grpcStatusOf(problem: Problem): GrpcStatus {
  return STATUS_BY_TYPE[problem.type] ?? STATUS_BY_HTTP[problem.status] ?? GrpcStatus.INTERNAL;
}

/** Trailing metadata keys that let a caller tell problems of one status apart (event-not-declared from forbidden). */
export const PROBLEM_METADATA = { type: 'problem-type', code: 'problem-code' } as const;

/**
 * What a call answers when its handler throws. The details are the problem's detail, followed by
 * its field errors (`data.firstName REQUIRED: …`); the problem type suffix and its code
 * travel as trailing metadata. An error that is no problem is an internal error: its cause is
 * logged, never sent.
 */
export function toServiceError(error: unknown, logger: Logger, method: string): ServiceError {
  const problem = isProblem(error) ? error : problems.internal(error);
  // A broker outage is the caller's to retry (docs/reference/events.md#rule-10), not a defect of ours.
  if (problem.status >= 500) logger[problem.type === 'events-broker-unavailable' ? 'warn' : 'error']({ err: error, method }, 'gRPC call failed');
  const metadata = new Metadata();
  metadata.set(PROBLEM_METADATA.type, problem.type);
  if (typeof problem.extensions.code === 'string') metadata.set(PROBLEM_METADATA.code, problem.extensions.code);
  const fields = (problem.extensions.errors ?? []).map((field) => `${field.field} ${field.code}: ${field.message}`);
  const details = [problem.detail, ...fields].join('; ');
  return Object.assign(new Error(details), { code: grpcStatusOf(problem), details, metadata });
}
