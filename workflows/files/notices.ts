import type { NoticeText } from '../notify/mail-notice';

/**
 * The mail to a tenant's owners and admins about an infected upload (document 2, File: "tenant admin
 * notified"), as `notice` template fields. Pure, so the workflow decides what it says deterministically.
 */
export function infectedFileNotice(fileId: string, originalName: string | null, signatures: readonly string[]): NoticeText {
  const name = originalName === null ? `File ${fileId}` : `The file "${originalName}" (${fileId})`;
  return {
    subject: 'An uploaded file was rejected: malware found',
    text: `${name} was rejected by the malware scan, which found: ${signatures.join(', ')}.\n\n`
      + 'The file was deleted before anyone could download it. If you know who uploaded it, check the device it came from.',
  };
}
