import { requestActor } from '../../common/temporal/activity-context';
import type { FileRef } from '../../services/files/scan';
import { purgeTrashedFile, type FileTrashDeps } from '../../services/files/trash';

/** The trash timer's activity (workflows/files/trash.workflow.ts): services/files/trash.ts, safe to repeat. */
export function createFileTrashActivities(deps: FileTrashDeps) {
  return {
    /** Purges the file if it is still in the trash from the deletion `deletedAt`. */
    async purgeTrashedFile(ref: FileRef, deletedAt: string): Promise<{ purged: boolean }> {
      return purgeTrashedFile(deps, ref, deletedAt, requestActor());
    },
  };
}

export type FileTrashActivities = ReturnType<typeof createFileTrashActivities>;
