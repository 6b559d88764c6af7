import { problems } from '../../../common/problems';
import type { DatabaseTransactionConnection } from '../../../db/pool';
import { selectFile } from '../../../db/queries/files/files.queries';
import {
  claimReferencedFiles, deleteFileReference, upsertFileReference, type FileReference,
} from '../../../db/queries/files/references.queries';
import type { Member } from '../../../db/queries/identity/members.queries';
import { isImage } from '../../files/thumbnails';
import { avatarUrlOf } from '../../files/views';

/**
 * A user's avatar (User.avatarUrl, docs/reference/identity.md#rule-34) taken from a platform file: an image of the
 * `avatars` bucket of the tenant the request is made in. The account keeps the avatar's address
 * (GET /users/:id/avatar, naming the file as its version), and the tenant a `user.avatar`
 * reference to the file (migration 0030), written in the account's own transaction: the orphan
 * sweep keeps the file while it is the avatar, and the address finds it by that reference
 * (docs/decisions/files.md, Orphans). Used by updateUser for PATCH /users/:id and PUT/DELETE
 * /auth/me/avatar alike.
 */

const AVATAR_BUCKET = 'avatars';

/** The file statuses a write may reference, as the data layer's (the upload is still being scanned, or clean). */
const REFERENCEABLE: ReadonlySet<string> = new Set(['pending_scan', 'available']);

/** What an avatar request changes: the new file and its URL, both null when the avatar is cleared. */
export interface AvatarChange {
  fileId: string | null;
  avatarUrl: string | null;
  /** The request's field that named the file, which an error names. */
  field: string;
}

/**
 * An unknown id, another tenant's file and one rejected, deleted or purged get one answer, as in the
 * data layer (services/data/file-references.ts), so another tenant's file ids are not told apart
 * from unknown ones.
 */
const fileNotFound = (field: string) => problems.validation([{
  field, code: 'FILE_NOT_FOUND', message: `${field} names no file of this tenant that can be referenced (pending_scan or available)`,
}], 'The avatar names a file that does not exist');

/**
 * What setting the avatar to `fileId` (null: clearing it) would change, checked but not written;
 * null when nothing would (the same file again, or no avatar to clear). A file of the tenant that is
 * not an image of the avatars bucket is FILE_NOT_AVATAR: it exists for the caller, and a document
 * or a module's asset would otherwise be kept from the orphan sweep and shown as a face.
 */
export async function avatarChangeOf(
  tx: DatabaseTransactionConnection, tenantId: string, member: Member, fileId: string | null, field: string,
): Promise<AvatarChange | null> {
  if (fileId === null) return member.avatarUrl === null ? null : { fileId: null, avatarUrl: null, field };
  const file = await selectFile(tx, tenantId, fileId);
  if (!file || !REFERENCEABLE.has(file.status)) throw fileNotFound(field);
  if (file.bucket !== AVATAR_BUCKET || !isImage(file.mimeType)) {
    throw problems.validation([{
      field, code: 'FILE_NOT_AVATAR', message: `${field} names a file that is not an image (image/*) of the ${AVATAR_BUCKET} bucket`,
    }], 'The file cannot be an avatar');
  }
  const avatarUrl = avatarUrlOf(member.id, fileId);
  return avatarUrl === member.avatarUrl ? null : { fileId, avatarUrl, field };
}

/**
 * Moves the user's `user.avatar` reference in the transaction that writes users.avatar_url.
 * claimReferencedFiles clears the file's orphan mark and locks its row until the commit, so the
 * sweep's purge cannot take it meanwhile; a file deleted or purged since avatarChangeOf read it is
 * FILE_NOT_FOUND, and the whole change rolls back.
 */
export async function recordAvatarReference(
  tx: DatabaseTransactionConnection, tenantId: string, userId: string, change: AvatarChange,
): Promise<void> {
  const reference: FileReference = { tenantId, referrer: 'user.avatar', referrerId: userId };
  if (change.fileId === null) {
    await deleteFileReference(tx, reference);
    return;
  }
  if (!(await claimReferencedFiles(tx, tenantId, [change.fileId])).has(change.fileId)) throw fileNotFound(change.field);
  await upsertFileReference(tx, reference, change.fileId);
}
