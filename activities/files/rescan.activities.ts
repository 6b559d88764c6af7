import { activityInfo, heartbeat } from '@temporalio/activity';
import { requestActor } from '../../common/temporal/activity-context';
import type { FileRow } from '../../db/queries/files/files.queries';
import {
  clamdSignatureVersion, rejectRescannedFile, rescanFiles, type FileRescanDeps, type RescanFinding, type RescanRequest,
} from '../../services/files/rescan';
import type { FileRef } from '../../services/files/scan';
import type { RescanPage } from '../../workflows/files/rescan.messages';

export type { RescanFinding, RescanRequest };

/** Well inside the page's heartbeat timeout (workflows/files/rescan.workflow.ts). */
const HEARTBEAT_EVERY_MS = 10_000;

/** Where a re-scanned file stands after its rejection step. */
export interface RescanOutcome {
  /** Null when the file has no row. */
  status: FileRow['status'] | null;
  reason: string | null;
  originalName: string | null;
}

/**
 * The re-scan's activities (workflows/files/rescan.workflow.ts): services/files/rescan.ts. Every
 * failure (clamd, the store, PostgreSQL) is thrown as it is and retried; nothing here is a refusal.
 */
export function createFileRescanActivities(deps: FileRescanDeps) {
  return {
    /** clamd's signature version (`1.4.6/27500`, or the engine alone without an official database). */
    async clamdSignatureVersion(): Promise<string> {
      return clamdSignatureVersion(deps);
    },

    /**
     * One page of stored files scanned again, heartbeating the page so far after every file and
     * every few seconds between (clamd answers once it has read a whole file). A retried attempt
     * continues from its last heartbeat rather than scanning the page's first files again.
     */
    async rescanFiles(request: RescanRequest): Promise<RescanPage> {
      let current = activityInfo().heartbeatDetails as RescanPage | undefined;
      const alive = setInterval(() => heartbeat(current), HEARTBEAT_EVERY_MS);
      try {
        return await rescanFiles(deps, request, (page) => {
          // A copy: the service goes on adding to its page while the heartbeat waits to be sent.
          current = structuredClone(page as RescanPage);
          heartbeat(current);
        }, current);
      } finally {
        clearInterval(alive);
      }
    },

    /** A file now found infected: rejected with its audit record, its objects removed. */
    async rejectRescannedFile(ref: FileRef, finding: RescanFinding): Promise<RescanOutcome> {
      const file = await rejectRescannedFile(deps, ref, finding, requestActor().traceId);
      return { status: file?.status ?? null, reason: file?.rejectedReason ?? null, originalName: file?.originalName ?? null };
    },
  };
}

export type FileRescanActivities = ReturnType<typeof createFileRescanActivities>;
