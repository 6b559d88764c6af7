import type { NoticeText } from '../notify/mail-notice';

const fileNameOf = (fileId: string, originalName: string | null): string =>
  (originalName === null ? `File ${fileId}` : `The file "${originalName}" (${fileId})`);

/**
 * The mail to a tenant's owners and admins about an infected upload (docs/reference/files.md#rule-10),
 * as `notice` template fields. Pure, so the workflow decides what it says deterministically.
 */
export function infectedFileNotice(fileId: string, originalName: string | null, signatures: readonly string[]): NoticeText {
  const name = fileNameOf(fileId, originalName);
  return {
    subject: 'An uploaded file was rejected: malware found',
    text: `${name} was rejected by the malware scan, which found: ${signatures.join(', ')}.\n\n`
      + 'The file was deleted before anyone could download it. If you know who uploaded it, check the device it came from.',
  };
}

/**
 * The mail to a tenant's owners and admins about a stored file that the re-scan found infected
 * (workflows/files/rescan.workflow.ts): unlike an upload, it may have been downloaded before.
 */
export function rescanInfectedFileNotice(fileId: string, originalName: string | null, signatures: readonly string[]): NoticeText {
  return {
    subject: 'A stored file was rejected: malware found by a new scan',
    text: `${fileNameOf(fileId, originalName)} passed the malware scan when it was uploaded, but a scan with newer `
      + `signatures found: ${signatures.join(', ')}.\n\n`
      + 'The file has been deleted and can no longer be downloaded. It may have been downloaded before: '
      + 'check the devices of the people who did, and the device it came from.',
  };
}
