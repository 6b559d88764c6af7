import { condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { FileTrashActivities } from '../../activities/files/trash.activities';
import { fileRestoredSignal, type FileTrashInput, type FileTrashResult } from './trash.messages';

/**
 * One transaction and the removal of a few objects: seconds. The store and the database are waited
 * for with no attempt limit; the purge is safe to repeat (services/files/trash.ts purgeTrashedFile).
 */
const { purgeTrashedFile } = proxyActivities<FileTrashActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/**
 * A deleted file's retention (docs/reference/files.md#rule-18: deleted → purged after 30 days), under the workflow id
 * `files.trash:<fileId>`: a durable timer of the retention, raced by the `restored` signal. Restored
 * first → the workflow ends and nothing is touched. Otherwise the file is purged (objects removed,
 * status purged, storage_bytes released, audit files.file.purged), if it is still in the trash from
 * the deletion this run was started for; the row is the truth, the signal only spares the wait.
 */
export async function fileTrash(input: FileTrashInput): Promise<FileTrashResult> {
  let restored = false;
  setHandler(fileRestoredSignal, () => {
    restored = true;
  });
  if (await condition(() => restored, input.retentionMs)) return { purged: false };
  return purgeTrashedFile({ tenantId: input.tenantId, fileId: input.fileId }, input.deletedAt);
}
