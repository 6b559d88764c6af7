/**
 * What the re-scan check, the re-scan workflow (workflows/files/rescan.workflow.ts) and their
 * starters exchange. Bundled into the workflow sandbox, so only types and pure helpers live here.
 */

/** The stored files a re-scan looks at: created in [since, until), ISO 8601. */
export interface RescanWindow {
  since: string;
  until: string;
}

/** Where a re-scan stands: the last file it looked at, in (tenant id, created_at, id) order. */
export interface RescanCursor {
  tenantId: string;
  /** The file's created_at to the microsecond. */
  createdAt: string;
  fileId: string;
}

/** A stored file clamd now finds infected. */
export interface InfectedStoredFile {
  tenantId: string;
  fileId: string;
  signatures: string[];
}

/** One page of a re-scan (activities/files/rescan.activities.ts rescanFiles). */
export interface RescanPage {
  /** Files clamd gave a verdict on. */
  scanned: number;
  /** Files whose stored object was gone or empty when their turn came (moved on meanwhile). */
  skipped: number;
  infected: InfectedStoredFile[];
  /** Where the next page starts; null once the window is done. */
  next: RescanCursor | null;
}

/** The running totals a re-scan carries across its runs (continue-as-new). */
export interface RescanTotals {
  scanned: number;
  skipped: number;
  /** Files this re-scan moved to rejected. */
  rejected: number;
}

export interface FileRescanInput {
  /** The scanner's signature version the re-scan is for (clamdSignatureVersion): its workflow id. */
  signatureVersion: string;
  window: RescanWindow;
  /** FILES_RESCAN_PER_SECOND: objects read per second at most, so the store and clamd keep serving uploads. */
  perSecond: number;
  /** Files per page (one activity). */
  pageSize: number;
  /** Files per run: past this many the workflow continues as new, so its history stays small. */
  filesPerRun: number;
  /** NOTIFY_TASK_QUEUE: where the mails to the tenants' admins are sent from. */
  notifyTaskQueue: string;
  /** Set by continue-as-new: where the previous run stopped, and what it had done. */
  after?: RescanCursor;
  totals?: RescanTotals;
}

export interface FileRescanResult extends RescanTotals {
  signatureVersion: string;
}

/** The Schedule's argument of the check (workers/schedules.ts fileRescanCheckSchedule). */
export interface FileRescanCheckInput {
  /** How far back a re-scan looks, in days (30: the files stored in the last 30 days). */
  windowDays: number;
  perSecond: number;
  notifyTaskQueue: string;
}

/**
 * What a check found. The Schedule hands it to the next run as its last completion result, which is
 * how the next check knows the version the previous one saw.
 */
export interface FileRescanCheckResult {
  signatureVersion: string;
  /** The version the previous check saw; null on the Schedule's first run (which only records the version). */
  previousSignatureVersion: string | null;
  /** The re-scan this check started (or found started); null when the version had not changed. */
  rescanWorkflowId: string | null;
}

/** One re-scan per signature version, ever (the starter's reuse policy), named for the Temporal UI. */
export function fileRescanWorkflowId(signatureVersion: string): string {
  return `files.rescan:${signatureVersion}`;
}
