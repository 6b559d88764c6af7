import type { ClientInterceptors, CompiledWorkflowOptions, WorkflowClientInterceptor } from '@temporalio/client';
import type { Headers } from '@temporalio/common';
import { currentRequestContext } from '../context';
import { withContextHeader } from './propagated-context';
import { tenantOfInput, withPlatformSearchAttributes } from './search-attributes';

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
 * The search attributes an operator filters by (common/temporal/search-attributes.ts): the workflow
 * type's BusinessKind and its tenant, which its input names or else the request that starts it. Set
 * here, at the start, so a workflow is found before any worker has picked it up.
 */
function withSearchAttributes(options: CompiledWorkflowOptions, workflowType: string): CompiledWorkflowOptions {
  const tenantId = tenantOfInput(options.args) ?? currentRequestContext()?.tenantId;
  const typedSearchAttributes = withPlatformSearchAttributes(options.typedSearchAttributes, workflowType, tenantId);
  return typedSearchAttributes ? { ...options, typedSearchAttributes } : options;
}

/** What every start adds to the starter's options. */
function startOptions(options: CompiledWorkflowOptions, workflowType: string): CompiledWorkflowOptions {
  return withSearchAttributes(withTenantMemo(options), workflowType);
}

/**
 * Carries the request context (tenant, trace, actor) of the request that starts, signals or updates
 * a workflow into the workflow's headers, where workflows/interceptors.ts picks it up. Queries are
 * left alone: they change nothing, so nothing downstream needs to know who asked.
 */
const requestContextInterceptor: WorkflowClientInterceptor = {
  startWithDetails: (input, next) =>
    next({ ...input, headers: withRequestContext(input.headers), options: startOptions(input.options, input.workflowType) }),
  signalWithStart: (input, next) =>
    next({ ...input, headers: withRequestContext(input.headers), options: startOptions(input.options, input.workflowType) }),
  signal: (input, next) => next({ ...input, headers: withRequestContext(input.headers) }),
  startUpdate: (input, next) => next({ ...input, headers: withRequestContext(input.headers) }),
  startUpdateWithStart: (input, next) => next({
    ...input,
    workflowStartHeaders: withRequestContext(input.workflowStartHeaders),
    workflowStartOptions: startOptions(input.workflowStartOptions, input.workflowType),
    updateHeaders: withRequestContext(input.updateHeaders),
  }),
};

/**
 * The interceptors every Temporal client of the platform installs: the gateway's, the worker
 * process's (Schedules, the staged-object consumer) and the one activities reach through their
 * Context (workers/temporal/worker.ts).
 */
export const clientInterceptors: ClientInterceptors = { workflow: [requestContextInterceptor] };
