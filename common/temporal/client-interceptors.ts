import type { ClientInterceptors, CompiledWorkflowOptions, WorkflowClientInterceptor } from '@temporalio/client';
import type { Headers } from '@temporalio/common';
import { currentRequestContext } from '../context';
import { withContextHeader } from './propagated-context';

/** Adds the current request's context to the headers; outside a request they pass unchanged. */
function withRequestContext(headers: Headers): Headers {
  const context = currentRequestContext();
  return context ? withContextHeader(headers, context) : headers;
}

/** The tenant goes into the memo as well, so the Temporal UI shows whose workflow it is. */
function withTenantMemo(options: CompiledWorkflowOptions): CompiledWorkflowOptions {
  const tenantId = currentRequestContext()?.tenantId;
  return tenantId ? { ...options, memo: { ...options.memo, tenantId } } : options;
}

/**
 * Carries the request context (tenant, trace, actor) of the request that starts, signals or updates
 * a workflow into the workflow's headers, where workflows/interceptors.ts picks it up. Queries are
 * left alone: they change nothing, so nothing downstream needs to know who asked.
 */
const requestContextInterceptor: WorkflowClientInterceptor = {
  startWithDetails: (input, next) =>
    next({ ...input, headers: withRequestContext(input.headers), options: withTenantMemo(input.options) }),
  signalWithStart: (input, next) =>
    next({ ...input, headers: withRequestContext(input.headers), options: withTenantMemo(input.options) }),
  signal: (input, next) => next({ ...input, headers: withRequestContext(input.headers) }),
  startUpdate: (input, next) => next({ ...input, headers: withRequestContext(input.headers) }),
  startUpdateWithStart: (input, next) => next({
    ...input,
    workflowStartHeaders: withRequestContext(input.workflowStartHeaders),
    workflowStartOptions: withTenantMemo(input.workflowStartOptions),
    updateHeaders: withRequestContext(input.updateHeaders),
  }),
};

/** The interceptors every Temporal client of the platform installs. */
export const clientInterceptors: ClientInterceptors = { workflow: [requestContextInterceptor] };
