/**
 * The public id of a job (docs/decisions/jobs.md): `<kind>.<localId>`, for example
 * `audit-cold-export.3f2a…`. The kind says which workflow to describe and which permission reads
 * it; the tenant is never part of the id: it comes from the caller's token, so an id carried into
 * another tenant names a workflow that does not exist there.
 */
export const JOB_ID_PATTERN = /^[a-z][a-z0-9-]{1,39}\.[A-Za-z0-9_-]{1,80}$/;

export interface ParsedJobId {
  kind: string;
  localId: string;
}

export function jobIdOf(kind: string, localId: string): string {
  return `${kind}.${localId}`;
}

/** The kind and local id of a well-formed job id (JOB_ID_PATTERN, checked by resolveJob). */
export function parseJobId(jobId: string): ParsedJobId {
  const dot = jobId.indexOf('.');
  return { kind: jobId.slice(0, dot), localId: jobId.slice(dot + 1) };
}
