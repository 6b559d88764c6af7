import {
  AsyncLocalStorage, workflowInfo,
  type Headers, type StartChildWorkflowExecutionInput, type WorkflowInterceptorsFactory, type WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import {
  contextFields, contextFromHeaders, traceIdFromRunId, withContextHeader, type PropagatedContext,
} from '../common/temporal/propagated-context';
import { TenantId, tenantOfInput, withPlatformSearchAttributes } from '../common/temporal/search-attributes';

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

  /**
   * A child workflow is labelled as a client start is (common/temporal/client-interceptors.ts): its
   * BusinessKind, and its tenant, which its input names, or else this workflow's own (a notice mail
   * of a tenant's subscription is that tenant's). Deterministic: from the command's own input and the
   * start of this run. The search attributes are not part of what replay compares of a child start,
   * so histories recorded before they were set replay unchanged (test/replay).
   */
  const childSearchAttributes = (input: StartChildWorkflowExecutionInput) => withPlatformSearchAttributes(
    input.options.typedSearchAttributes, input.workflowType,
    tenantOfInput(input.options.args) ?? workflowInfo().typedSearchAttributes.get(TenantId) ?? current().tenantId,
  );

  const outbound: WorkflowOutboundCallsInterceptor = {
    scheduleActivity: (input, next) => next({ ...input, headers: carry(input.headers) }),
    scheduleLocalActivity: (input, next) => next({ ...input, headers: carry(input.headers) }),
    startChildWorkflowExecution: (input, next) => {
      const typedSearchAttributes = childSearchAttributes(input);
      return next({ ...input, headers: carry(input.headers), ...(typedSearchAttributes && { options: { ...input.options, typedSearchAttributes } }) });
    },
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
