import { problems } from '../../common/problems';
import { coldExportJobKind } from '../audit/export/job';
import type { AuditExportDeps } from '../audit/export/deps';
import { fileProcessJobKind } from '../files/process-job';
import { deadLetterReplayJobKind } from '../events/dead-letters/replay-job';
import { webhookTestJobKind } from '../events/webhooks/deliveries';
import { moneyJobKinds, type MoneyJobDeps } from '../money/jobs';
import { JOB_ID_PATTERN, parseJobId, type JobKind } from '../../common/jobs';

/** Every kind of job the gateway answers 202 for; a new kind (file processing, replays…) joins here. */
export interface JobKindDeps {
  auditExport: AuditExportDeps;
  money: MoneyJobDeps;
}

export type JobKinds = ReadonlyMap<string, JobKind>;

export function jobKinds(deps: JobKindDeps): JobKinds {
  return new Map([
    coldExportJobKind(deps.auditExport), fileProcessJobKind, deadLetterReplayJobKind, webhookTestJobKind, ...moneyJobKinds(deps.money),
  ]
    .map((kind) => [kind.name, kind]));
}

export interface ResolvedJob {
  jobId: string;
  kind: JobKind;
  localId: string;
}

/**
 * The kind of a job id; 404 not-found for an id of any other shape, a kind that does not exist or an id it
 * never issues. Job ids are opaque to clients (docs/decisions/jobs.md), so none of these is a malformed request.
 */
export function resolveJob(kinds: JobKinds, jobId: string): ResolvedJob {
  if (!JOB_ID_PATTERN.test(jobId)) throw problems.notFound('job');
  const { kind: name, localId } = parseJobId(jobId);
  const kind = kinds.get(name);
  if (!kind || !kind.localId.test(localId)) throw problems.notFound('job');
  return { jobId, kind, localId };
}
