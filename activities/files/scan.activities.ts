import { ApplicationFailure, heartbeat } from '@temporalio/activity';
import { isProblem } from '../../common/problems';
import { requestActor } from '../../common/temporal/activity-context';
import type { FileRow } from '../../db/queries/files/files.queries';
import { promoteFile } from '../../services/files/promote';
import { rejectFile, tenantAdminEmails, type Rejection } from '../../services/files/reject';
import { scanAndPromoteFile } from '../../services/files/scan-and-promote';
import { scanFile, stagedObjectLanded, type FileRef, type FileScanDeps } from '../../services/files/scan';
import {
  StagedObjectEmpty, StagedObjectMissing, StagedObjectSizeMismatch, type ScanVerdict, type StagedObjectVerdict,
} from '../../services/files/scanner';
import { generateThumbnails, isImage } from '../../services/files/thumbnails';

export type { FileRef, Rejection, ScanVerdict, StagedObjectVerdict };

/** Well inside the scan's heartbeat timeout (30 s, workflows/files/scan.workflow.ts). */
const HEARTBEAT_EVERY_MS = 10_000;

/** Where a file stands after a step of its scan workflow: what the workflow decides its next step by. */
export interface FileScanOutcome {
  status: FileRow['status'];
  reason: string | null;
  /** Null when the file has no row (an upload whose row never committed). */
  originalName: string | null;
  /** An available image gets thumbnails. */
  image: boolean;
}

/** The scan in one step: infected (the workflow rejects the file and tells the admins), or where the file now stands. */
export type ScannedFileOutcome = { infected: true; signatures: string[] } | { infected: false; outcome: FileScanOutcome };

function outcomeOf(file: FileRow | null, rejection?: Rejection): FileScanOutcome {
  if (!file) return { status: 'rejected', reason: rejection?.reason ?? null, originalName: null, image: false };
  return { status: file.status, reason: file.rejectedReason, originalName: file.originalName, image: isImage(file.mimeType) };
}

/**
 * Runs a scan, heartbeating the bytes sent and, between them, every few seconds (clamd answers only
 * once it has read the whole stream), so a lost worker is noticed within the heartbeat timeout
 * however large the file; the staged object's own faults become non-retryable failures.
 */
async function scanning<T>(scan: () => Promise<T>): Promise<T> {
  const alive = setInterval(() => heartbeat(), HEARTBEAT_EVERY_MS);
  try {
    return await scan();
  } catch (error) {
    if (error instanceof StagedObjectMissing) throw ApplicationFailure.nonRetryable(error.message, 'staged-object-missing');
    if (error instanceof StagedObjectEmpty) throw ApplicationFailure.nonRetryable(error.message, 'staged-object-empty');
    if (error instanceof StagedObjectSizeMismatch) throw ApplicationFailure.nonRetryable(error.message, 'staged-object-size-mismatch');
    // The workflow may start a moment before the upload's row commits: retried (the staging TTL bounds it).
    if (isProblem(error) && error.type === 'file-not-found') throw ApplicationFailure.retryable(error.detail, 'file-not-found');
    throw error;
  } finally {
    clearInterval(alive);
  }
}

/**
 * The scan workflow's activities (workflows/files/scan.workflow.ts): services/files, with failures
 * typed for the workflow's retry policy. What no retry can change is non-retryable:
 * staged-object-missing, staged-object-empty, staged-object-size-mismatch. Everything else (clamd, the object store or the
 * database unreachable) is thrown as it is and retried.
 */
export function createFileScanActivities(deps: FileScanDeps) {
  return {
    /** Streams the staged object to clamd (the scan of workflows recorded before scanAndPromoteFile). */
    async scanStagedFile(ref: FileRef): Promise<StagedObjectVerdict> {
      return scanning(() => scanFile(deps, ref, heartbeat));
    },

    /**
     * The scan and, when clean, the promotion and an image's thumbnails, in one activity
     * (services/files/scan-and-promote.ts); heartbeats and failures as scanStagedFile's.
     */
    async scanAndPromoteFile(ref: FileRef): Promise<ScannedFileOutcome> {
      const scanned = await scanning(() => scanAndPromoteFile(deps, ref, requestActor(), heartbeat));
      return scanned.infected ? scanned : { infected: false, outcome: outcomeOf(scanned.file) };
    },

    /** A presigned upload's last look: is its object in staging although no notification came? */
    async stagedObjectLanded(ref: FileRef): Promise<boolean> {
      return stagedObjectLanded(deps, ref);
    },

    /**
     * Clean: copy to the final key (only while the staged object is still the one scanned, when its
     * ETag is given), available with files.file.uploaded and its audit record, staging removed.
     */
    async promoteFile(ref: FileRef, scannedEtag?: string): Promise<FileScanOutcome> {
      return outcomeOf(await promoteFile(deps, ref, requestActor(), scannedEtag));
    },

    /** Infected, expired or unscannable: staging removed, rejected with its audit record. */
    async rejectFile(ref: FileRef, rejection: Rejection): Promise<FileScanOutcome> {
      return outcomeOf(await rejectFile(deps, ref, rejection, requestActor()), rejection);
    },

    async tenantAdminEmails(tenantId: string): Promise<string[]> {
      return tenantAdminEmails(deps, tenantId);
    },

    /** icon_32 and card_300 of an available image; an image sharp cannot read gets none (logged). */
    async generateThumbnails(ref: FileRef): Promise<Record<string, string>> {
      return generateThumbnails(deps, ref);
    },
  };
}

export type FileScanActivities = ReturnType<typeof createFileScanActivities>;
