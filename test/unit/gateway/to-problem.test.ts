import { WorkflowNotFoundError } from '@temporalio/client';
import { BackendTerminatedError, ConnectionError, InvalidInputError } from 'slonik';
import { toProblem } from '../../../api/http/to-problem';
import { CircuitOpenError } from '../../../api/resilience/circuit-breaker';
import { problems } from '../../../common/problems';

/** Whatever is thrown becomes a problem of the registry; only client mistakes and downstream codes show through. */
describe('thrown errors → problems', () => {
  it('passes problems through untouched', () => {
    const problem = problems.conflict('already there');
    expect(toProblem(problem)).toBe(problem);
  });

  it.each([
    [3, 400, 'validation-error'],
    [16, 401, 'unauthorized'],
    [7, 403, 'forbidden'],
    [5, 404, 'not-found'],
    [6, 409, 'conflict'],
    [8, 429, 'rate-limit-exceeded'],
    [13, 500, 'internal-error'],
    [14, 503, 'service-unavailable'],
    [4, 504, 'gateway-timeout'],
    [2, 500, 'internal-error'], // UNKNOWN has no mapping of its own
  ])('maps gRPC code %i to %i %s', (code, status, type) => {
    const problem = toProblem(Object.assign(new Error(`${code} STATUS: detail`), { code, details: 'detail from downstream' }));
    expect({ status: problem.status, type: problem.type }).toEqual({ status, type });
  });

  it.each([
    ['22P02 (slonik’s InvalidInputError)', new InvalidInputError('invalid input syntax for type uuid: "(0190a8f0-0000-7000-8000-000000000000)"')],
    ['22008', Object.assign(new Error('date/time field value out of range: "0000-01-01"'), { code: '22008' })],
  ])('answers PostgreSQL’s data exception %s (a request value it cannot read) with 400 validation-error', (_name, error) => {
    const problem = toProblem(error);
    expect({ status: problem.status, type: problem.type }).toEqual({ status: 400, type: 'validation-error' });
    expect(problem.detail).not.toContain('0000');
  });

  it.each([
    ['PostgreSQL refusing connections', new ConnectionError('connect ECONNREFUSED 127.0.0.1:5432')],
    ['PostgreSQL starting up', new ConnectionError('the database system is starting up')],
    ['PostgreSQL ending the connection in use', new BackendTerminatedError(new Error('terminating connection due to unexpected postmaster exit'))],
    ['the object store refusing connections', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9000'), { code: 'ECONNREFUSED' })],
  ])('answers a downstream outage (%s) with 503 and a Retry-After, not an internal error', (_name, error) => {
    const problem = toProblem(error);
    expect({ status: problem.status, type: problem.type, retryAfter: problem.extensions.retryAfter }).toEqual({ status: 503, type: 'service-unavailable', retryAfter: 1 });
    expect(problem.detail).not.toMatch(/127\.0\.0\.1|postmaster/);
  });

  it('shows a downstream’s detail for client errors but not for its own failures', () => {
    expect(toProblem(Object.assign(new Error('x'), { code: 5, details: 'wallet w1 not found' })).detail).toBe('wallet w1 not found');
    expect(toProblem(Object.assign(new Error('x'), { code: 14, details: 'connect ECONNREFUSED 10.0.0.7:7233' })).detail)
      .not.toContain('10.0.0.7');
  });

  it('finds the gRPC code in the cause of a wrapping error (Temporal ServiceError)', () => {
    const grpc = Object.assign(new Error('6 ALREADY_EXISTS'), { code: 6, details: 'exists' });
    expect(toProblem(new Error('service error', { cause: grpc })).type).toBe('conflict');
  });

  it('maps Temporal’s own not-found error like gRPC NOT_FOUND', () => {
    expect(toProblem(new WorkflowNotFoundError('workflow not found', 'wf', undefined)).status).toBe(404);
  });

  it('answers an open circuit with 503 service-unavailable', () => {
    expect(toProblem(new CircuitOpenError('temporal'))).toMatchObject({ status: 503, type: 'service-unavailable' });
  });

  it('does not take a Node system error code for a gRPC code', () => {
    const denied = Object.assign(new Error('open /var/lib/platform: permission denied'), { code: 'EACCES' });
    expect(toProblem(denied)).toMatchObject({ status: 500, type: 'internal-error', detail: 'An unexpected error occurred' });
  });

  it('maps the body parser’s errors to client problems', () => {
    expect(toProblem(Object.assign(new SyntaxError('Unexpected end of JSON input'), { status: 400 })).type).toBe('validation-error');
    expect(toProblem(Object.assign(new Error('too large'), { status: 413, type: 'entity.too.large', limit: 1024 })))
      .toMatchObject({ status: 413, detail: 'The request body exceeds 1024 bytes' });
    expect(toProblem(Object.assign(new Error('bad charset'), { status: 415, type: 'charset.unsupported', charset: 'utf-7' })).status).toBe(415);
  });
});
