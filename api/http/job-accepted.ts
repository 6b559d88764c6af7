import type { ParameterizedContext } from 'koa';

/**
 * The one answer of an operation that starts long work (docs/reference/jobs.md): 202, `Location` naming the
 * job (GET /v1/jobs/{jobId}, one resource for every kind of job: docs/decisions/jobs.md), and a
 * body that carries `jobId` beside what the operation itself says of the work.
 */
export function acceptJob(ctx: ParameterizedContext, jobId: string, body: Record<string, unknown> = {}): void {
  ctx.set('Location', `/v1/jobs/${jobId}`);
  ctx.status = 202;
  ctx.body = { jobId, ...body };
}
