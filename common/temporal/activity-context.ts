import { AsyncLocalStorage } from 'node:async_hooks';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { newTraceId } from '../ids';
import type { Logger } from '../logger';
import { contextFields, contextFromHeaders, traceIdFromRunId, type PropagatedContext } from './propagated-context';

const storage = new AsyncLocalStorage<Readonly<PropagatedContext>>();

/**
 * The tenant, trace and actor of the request behind the running activity (workflows/interceptors.ts
 * puts them on every activity it schedules). Throws outside an activity, where there is none to give.
 */
export function activityContext(): Readonly<PropagatedContext> {
  const context = storage.getStore();
  if (!context) throw new Error('activityContext() is only available inside an activity run by a platform worker');
  return context;
}

/** The person behind the running activity (the sender of the request the workflow carried), and its trace. */
export function requestActor(): { actorId: string | null; traceId: string | undefined } {
  const context = activityContext();
  return { actorId: context.actorId ?? null, traceId: context.traceId };
}

/**
 * Restores the propagated context around each activity, and adds it to the attributes of Temporal's
 * own activity log lines ("Activity failed", retries).
 */
export const contextActivityInterceptors: ActivityInterceptorsFactory = (activity) => {
  // Until the headers arrive, and for work that carries none (a workflow run by a worker without our
  // workflow interceptors, a standalone activity), the run id stands in as the trace id.
  const runId = activity.info.workflowExecution?.runId ?? activity.info.activityRunId;
  let context: PropagatedContext = { traceId: runId ? traceIdFromRunId(runId) : newTraceId() };
  return {
    inbound: {
      execute: (input, next) => {
        context = contextFromHeaders(input.headers) ?? context;
        return storage.run(Object.freeze(context), () => next(input));
      },
    },
    outbound: {
      getLogAttributes: (attributes, next) => next({ ...attributes, ...contextFields(context) }),
    },
  };
};

/**
 * A logger for activity code whose every line carries the running activity's context, so activities
 * log with the logger they were given and never pass trace ids around by hand.
 */
export function contextBoundLogger(logger: Logger): Logger {
  return logger.child({}, {
    formatters: { log: (line) => ({ ...contextOrNothing(), ...line }) },
  });
}

function contextOrNothing(): PropagatedContext | Record<string, never> {
  const context = storage.getStore();
  return context ? contextFields(context) : {};
}
