import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { BackendTerminatedError, BackendTerminatedUnexpectedlyError, ConnectionError } from 'slonik';
import { isProblem, problemFromGrpc, problems, type Problem } from '../../common/problems';
import { CircuitOpenError } from '../resilience/circuit-breaker';
import { constraintProblemOf } from './constraint-problems';

/**
 * Turns whatever a handler or middleware threw into a problem of the registry. Only problems,
 * known constraint violations, downstream status codes and the body parser's client errors say
 * something the caller may see; everything else is an internal error whose cause is logged, never
 * shown.
 */
export function toProblem(error: unknown): Problem {
  if (isProblem(error)) return error;
  if (error instanceof CircuitOpenError) return problems.unavailable(error.message);
  const outage = outageOf(error);
  if (outage) return outage;
  const constraint = constraintProblemOf(error);
  if (constraint) return constraint;

  const grpc = grpcStatusOf(error) ?? temporalStatusOf(error);
  if (grpc) {
    const mapped = problemFromGrpc(grpc.code, grpc.details);
    // A downstream's own words about its failure (addresses, stack fragments) stay in the log.
    return mapped.status < 500 ? mapped : problemFromGrpc(grpc.code, 'A downstream service did not answer the request');
  }

  return clientErrorOf(error) ?? problems.internal(error);
}

/** Node's codes for a connection to a downstream (the object store, clamd) refused or broken. */
const NETWORK_FAILURES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE']);

/**
 * A downstream the request needed is down: PostgreSQL refusing connections, starting up, or ending
 * the one in use (docs/faults.md, a PostgreSQL restart), or a refused or broken connection to
 * another server. The request did nothing or was rolled back, so it is 503 with a short
 * Retry-After, what a client retries, not an internal error.
 */
function outageOf(error: unknown): Problem | null {
  if (error instanceof ConnectionError || error instanceof BackendTerminatedError || error instanceof BackendTerminatedUnexpectedlyError) {
    return problems.unavailable('The database is unavailable; try again shortly', error, 1);
  }
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && NETWORK_FAILURES.has(code) ? problems.unavailable('A service this request needs is unavailable; try again shortly', error, 1) : null;
}

/** gRPC status codes 1..16 (0 is OK); Node's system errors use string codes and never match. */
function isGrpcCode(code: unknown): code is number {
  return typeof code === 'number' && Number.isInteger(code) && code >= 1 && code <= 16;
}

/**
 * A gRPC error carries a numeric `code`; Temporal's client wraps it (ServiceError, WorkflowFailedError)
 * with the gRPC error as `cause`, so the cause chain is followed a few steps.
 */
function grpcStatusOf(error: unknown): { code: number; details: string } | null {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current && typeof current === 'object'; depth += 1) {
    const candidate = current as { code?: unknown; details?: unknown; message?: unknown; cause?: unknown };
    if (isGrpcCode(candidate.code)) {
      const details = typeof candidate.details === 'string' && candidate.details
        ? candidate.details
        : typeof candidate.message === 'string' ? candidate.message : '';
      return { code: candidate.code, details };
    }
    current = candidate.cause;
  }
  return null;
}

/**
 * Temporal's client turns some gRPC statuses into its own error classes and drops the code; they
 * are mapped back to the status they stand for, so they share the gRPC mapping of common/problems.ts (problemFromGrpc).
 */
function temporalStatusOf(error: unknown): { code: number; details: string } | null {
  if (error instanceof WorkflowNotFoundError) return { code: 5, details: error.message }; // NOT_FOUND
  if (error instanceof WorkflowExecutionAlreadyStartedError) return { code: 6, details: error.message }; // ALREADY_EXISTS
  if (error instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return { code: 4, details: error.message }; // DEADLINE_EXCEEDED
  return null;
}

const BOURNE_PROTOTYPE_MESSAGE = 'Object contains forbidden prototype property';

/** Stated once for every document (api/openapi/document.ts). */
export const PROTOTYPE_KEY_RULE = 'A JSON body never has a __proto__ key, nor a constructor key holding prototype (prototype pollution).';

/**
 * The body parser (co-body, raw-body) throws http-errors with a `type`; these are the caller's
 * mistakes and get their own problem types.
 */
function clientErrorOf(error: unknown): Problem | null {
  if (!error || typeof error !== 'object') return null;
  const { type, status, limit, name } = error as { type?: unknown; status?: unknown; limit?: unknown; name?: unknown };
  if (type === 'entity.too.large' || status === 413) {
    return problems.payloadTooLarge(typeof limit === 'number' ? `${limit} bytes` : 'the size limit');
  }
  // co-body refuses prototype-polluting keys (bourne, protoAction 'error') with a SyntaxError of
  // its own: the JSON is valid, the key is not accepted, and the problem says which.
  if (name === 'SyntaxError' && status === 400 && (error as { message?: unknown }).message === BOURNE_PROTOTYPE_MESSAGE) {
    return problems.validation([{ field: 'body', message: PROTOTYPE_KEY_RULE, code: 'INVALID_VALUE' }], PROTOTYPE_KEY_RULE);
  }
  // co-body rethrows JSON.parse's SyntaxError with status 400 (raw-body's own errors carry a type).
  if (type === 'entity.parse.failed' || (name === 'SyntaxError' && status === 400)) {
    return problems.validation(
      [{ field: 'body', message: 'The request body is not valid JSON', code: 'INVALID_FORMAT' }],
      'The request body is not valid JSON',
    );
  }
  if (type === 'encoding.unsupported' || type === 'charset.unsupported' || status === 415) {
    // raw-body's unsupported-encoding errors carry the offending name as a string.
    const { charset, encoding } = error as { charset?: string; encoding?: string };
    return problems.unsupportedMediaType(charset ?? encoding ?? '');
  }
  if (type === 'request.aborted' || type === 'request.size.invalid') {
    return problems.validation([], 'The request body was incomplete');
  }
  return null;
}
