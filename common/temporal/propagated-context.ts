import { defaultPayloadConverter, type Headers } from '@temporalio/common';
import type { RequestContext } from '../context';

/**
 * How the request context crosses Temporal: one header on every workflow start, signal, update,
 * activity and child workflow. This module is bundled into the workflow sandbox too, so it must stay
 * free of Node built-ins and I/O (test/workflows/workflow-sandbox.test.ts checks it with the workflows).
 */
export type PropagatedContext = RequestContext;

export const CONTEXT_HEADER = 'platform-context';

const optionalFields = ['tenantId', 'actorId', 'impersonatorId'] as const;

export function withContextHeader(headers: Headers, context: PropagatedContext): Headers {
  return { ...headers, [CONTEXT_HEADER]: defaultPayloadConverter.toPayload(contextFields(context)) };
}

/** The context a header carries, or undefined when there is none or it is not ours. */
export function contextFromHeaders(headers: Headers): PropagatedContext | undefined {
  const payload = headers[CONTEXT_HEADER];
  if (!payload) return undefined;
  const value: unknown = defaultPayloadConverter.fromPayload(payload);
  if (!isRecord(value) || typeof value.traceId !== 'string') return undefined;
  const context: PropagatedContext = { traceId: value.traceId };
  for (const field of optionalFields) {
    if (typeof value[field] === 'string') context[field] = value[field];
  }
  return context;
}

/** The context's own fields without absent ones: what the header carries and what every log line gets. */
export function contextFields(context: PropagatedContext): PropagatedContext {
  const fields: PropagatedContext = { traceId: context.traceId };
  for (const field of optionalFields) {
    if (context[field] !== undefined) fields[field] = context[field];
  }
  return fields;
}

/**
 * Work nobody requested (a Schedule's run, a workflow started by hand) still needs a trace id to tie
 * its log lines together. The run id is a UUID, so without its dashes it is 32 hex digits: a valid
 * W3C trace id that is the same on every replay.
 */
export function traceIdFromRunId(runId: string): string {
  return runId.replaceAll('-', '').toLowerCase();
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
