import { status } from '@grpc/grpc-js';
import { grpcStatusOf, toServiceError } from '../../../api/grpc/status';
import { createLogger } from '../../../common/logger';
import { problems, type Problem } from '../../../common/problems';

const logger = createLogger('grpc-status-test', 'silent');

// api/grpc/status.ts: the one table from problems to gRPC status codes, with the codes of docs/reference/events.md#errors as examples.
describe('problem → gRPC status', () => {
  it.each<[string, Problem, status]>([
    ['a payload that does not match (no schema, bad field)', problems.validation([]), status.INVALID_ARGUMENT],
    ['a payload over 1 MB', problems.eventPayloadTooLarge(1024 * 1024, 1024 * 1024 + 1), status.INVALID_ARGUMENT],
    ['a malformed schema version', problems.invalidSchemaVersion('schemaVersion 1.0'), status.INVALID_ARGUMENT],
    ['no token', problems.unauthorized(), status.UNAUTHENTICATED],
    ['an expired token', problems.tokenExpired(), status.UNAUTHENTICATED],
    ['no events.publish', problems.forbidden(), status.PERMISSION_DENIED],
    ['a kernel namespace', problems.eventTopicProtected('auth', 'auth.user.created', 'identity'), status.PERMISSION_DENIED],
    ['an undeclared type', problems.eventNotDeclared('crm', 'crm.contact.deleted', 'not declared'), status.PERMISSION_DENIED],
    ['an unknown topic', problems.notFound('topic platform.nothing.events'), status.NOT_FOUND],
    ['the broker down', problems.eventsBrokerUnavailable(new Error('ECONNREFUSED')), status.UNAVAILABLE],
    ['a dead letter resolved or expired (400 over REST)', problems.deadLetterNotRetryable('Event x', 'resolved'), status.FAILED_PRECONDITION],
    ['anything unexpected', problems.internal(new Error('boom')), status.INTERNAL],
  ])('%s', (_case, problem, expected) => {
    expect(grpcStatusOf(problem)).toBe(expected);
  });

  it('sends the detail with the field errors, the type and the code as trailing metadata', () => {
    const error = toServiceError(problems.eventTopicProtected('auth', 'auth.user.created', 'identity'), logger, 'Publish');
    expect({ code: error.code, details: error.details }).toEqual({
      code: status.PERMISSION_DENIED, details: 'Module auth may not publish auth.user.created: the namespace belongs to the identity service',
    });
    expect(error.metadata.getMap()).toEqual({ 'problem-type': 'event-topic-protected', 'problem-code': 'KERNEL_EVENT_PUBLISH_FORBIDDEN' });

    const invalid = toServiceError(problems.validation([{ field: 'data.firstName', code: 'REQUIRED', message: 'required' }], 'bad data'), logger, 'Publish');
    expect(invalid.details).toBe('bad data; data.firstName REQUIRED: required');
  });

  it('never describes an error that is no problem', () => {
    const error = toServiceError(new Error('password=hunter2 at db.ts:12'), logger, 'Publish');
    expect({ code: error.code, details: error.details }).toEqual({ code: status.INTERNAL, details: 'An unexpected error occurred' });
  });
});
