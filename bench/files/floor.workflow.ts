import { proxyLocalActivities } from '@temporalio/workflow';

/** A file staged by the floor's server (bench/files/floor-server.ts), and where its work stores it. */
export interface FloorUpload {
  id: string;
  stagingKey: string;
  prefix: string;
  sizeBytes: number;
}

export interface FloorActivities {
  /** promoteDirectly (bench/files/direct-work.ts): scan, copy, staging removed, two thumbnails. */
  promoteStaged(upload: FloorUpload): Promise<string[]>;
}

const { promoteStaged } = proxyLocalActivities<FloorActivities>({ startToCloseTimeout: '2 minutes' });

/**
 * The least a workflow per file can be (issue 17: "the scan pipeline is one workflow per file"): the
 * file's whole work in one local activity, as the platform's fileScan does for a file of at most
 * 10 MB, and no bookkeeping (no row, no event, no audit record). Answers the keys it stored.
 */
export async function benchFileFloor(upload: FloorUpload): Promise<string[]> {
  return promoteStaged(upload);
}
