import {
  AsyncLocalStorage, workflowInfo,
  type Headers, type WorkflowInterceptorsFactory, type WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import {
  contextFields, contextFromHeaders, traceIdFromRunId, withContextHeader, type PropagatedContext,
} from '../common/temporal/propagated-context';

/**
 * Workflow side of context propagation (registered through the worker's workflow interceptor
 * modules). The context of the start request is the workflow's own; a signal or update brings its
 * sender's trace and actor, which hold for the activities its handler schedules. The tenant is always
 * the workflow's: every workflow belongs to exactly one tenant, whoever signals it.
 *
 * The factory runs once per workflow execution, so the closure below is per-workflow state.
 */
export const interceptors: WorkflowInterceptorsFactory = () => {
  const handlerContext = new AsyncLocalStorage<PropagatedContext>();
  let startContext: PropagatedContext | undefined;

  const current = (): PropagatedContext =>
    handlerContext.getStore() ?? startContext ?? { traceId: traceIdFromRunId(workflowInfo().runId) };

  function inHandlerContext<T>(headers: Headers, handle: () => T): T {
    const sender = contextFromHeaders(headers);
    if (!sender) return handle();
    return handlerContext.run({ ...sender, tenantId: startContext?.tenantId ?? sender.tenantId }, handle);
  }

  /** Every outbound call that starts work elsewhere carries the current context along. */
  const carry = (headers: Headers): Headers => withContextHeader(headers, current());

  const outbound: WorkflowOutboundCallsInterceptor = {
    scheduleActivity: (input, next) => next({ ...input, headers: carry(input.headers) }),
    scheduleLocalActivity: (input, next) => next({ ...input, headers: carry(input.headers) }),
    startChildWorkflowExecution: (input, next) => next({ ...input, headers: carry(input.headers) }),
    signalWorkflow: (input, next) => next({ ...input, headers: carry(input.headers) }),
    continueAsNew: (input, next) => next({ ...input, headers: carry(input.headers) }),
    getLogAttributes: (attributes, next) => next({ ...attributes, ...contextFields(current()) }),
  };

  return {
    inbound: [{
      execute: (input, next) => {
        startContext = contextFromHeaders(input.headers);
        return next(input);
      },
      handleSignal: (input, next) => inHandlerContext(input.headers, () => next(input)),
      handleUpdate: (input, next) => inHandlerContext(input.headers, () => next(input)),
    }],
    outbound: [outbound],
  };
};
