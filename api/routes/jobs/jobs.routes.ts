import { readJob, type JobsDeps } from '../../../services/jobs/read-job';
import { resolveJob } from '../../../services/jobs/registry';
import { authOf } from '../../context';
import { defineRoute, type AnyRoute } from '../../http/route-registry';
import { requirePermission } from '../../middleware/authorize';
import type { PermissionResolver } from '../../runtime/permission-resolver';
import { jobParams, jobView, type JobParams } from './jobs.schemas';

export interface JobRouteDeps extends JobsDeps {
  resolver: PermissionResolver;
  /** PROBLEM_BASE: a failed job's error is rendered as the problem middleware renders errors. */
  problemBase: string;
}

/**
 * The one job resource (docs/decisions/jobs.md): every operation that answers 202 names its job
 * here. The permission is the job kind's, the one its start route requires, so it is checked in
 * the handler once the id has named the kind; the job is read from its workflow, in the caller's tenant.
 */
export function jobRoutes(deps: JobRouteDeps): AnyRoute[] {
  return [
    defineRoute<JobParams>({
      namespace: 'gateway', method: 'GET', path: '/jobs/:jobId', operationId: 'jobs.get',
      summary: 'The state of a job started by an operation that answered 202',
      description: 'status is running, completed (result, shaped by the kind), failed (error: an RFC 9457 problem) or '
        + 'canceled. Reading a job needs the permission of the operation that started it (audit-cold-export: '
        + 'audit.export; files-process: files.write; events-dlq-replay: events.dlq.retry; money-transfer, money-hold, '
        + 'money-confirm, money-cancel: money.write). A job of another tenant, or an id no kind issues, is 404 not-found.',
      auth: 'bearer',
      schemas: { params: jobParams, response: { 200: jobView } },
      async handler(ctx) {
        const auth = authOf(ctx);
        const job = resolveJob(deps.kinds, ctx.guard.params.jobId);
        await requirePermission(deps.resolver, auth, job.kind.permission);
        const { error, ...view } = await readJob(deps, auth.tenantId, job);
        ctx.body = error ? { ...view, error: error.toJSON(deps.problemBase, ctx.path, ctx.state.traceId) } : view;
      },
    }),
  ];
}
