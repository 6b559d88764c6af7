import sharp from 'sharp';
import { newId } from '../../common/ids';
import type { ObjectStore } from '../../common/object-store';
import { sql, type DatabasePool } from '../../db/pool';
import { adjustUsage } from '../../db/queries/billing/usage.queries';
import { selectFile, type FileRow } from '../../db/queries/files/files.queries';
import { withTenant } from '../../db/tenant';
import { BUILT_IN_ROLES } from '../../services/access/permissions';
import { presignedStagingKeyOf, receivedStagingKeyOf } from '../../services/files/object-keys';
import { createMember, type Member } from './users';

/**
 * Fixtures of the scan workflow's tests: a tenant with its built-in roles and an owner, an admin and
 * a member, and files staged as the upload route leaves them (a pending_scan row and its staged
 * object), written as the owner role, since the upload route is another test's subject.
 */

/** The EICAR anti-virus test file (68 bytes, harmless by design; the local clamd detects it). */
export const EICAR = 'X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*';

export interface FilesTenant {
  tenantId: string;
  owner: Member;
  admin: Member;
  member: Member;
}

export async function seedFilesTenant(db: DatabasePool): Promise<FilesTenant> {
  const tenantId = newId();
  await db.transaction(async (tx) => {
    await tx.query(sql.unsafe`INSERT INTO tenants (id, name) VALUES (${tenantId}, 'Files scan test')`);
    for (const role of BUILT_IN_ROLES) {
      await tx.query(sql.unsafe`
        INSERT INTO roles (id, tenant_id, name, description, permissions, built_in)
        VALUES (${newId()}, ${tenantId}, ${role.name}, ${role.description}, ${sql.array(role.permissions, 'text')}, true)
      `);
    }
  });
  const [owner, admin, member] = [
    await createMember(db, tenantId, 'owner'), await createMember(db, tenantId, 'admin'), await createMember(db, tenantId, 'member'),
  ];
  return { tenantId, owner, admin, member };
}

/** A PNG of `width`×`height` (a two-colour gradient, so its thumbnails are real images). */
export function samplePng(width = 640, height = 480): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">`
    + '<defs><linearGradient id="g"><stop offset="0" stop-color="#0a6"/><stop offset="1" stop-color="#fc0"/></linearGradient></defs>'
    + `<rect width="${width}" height="${height}" fill="url(#g)"/></svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

export interface StagedFile {
  tenantId: string;
  fileId: string;
  stagingKey: string;
  sizeBytes: number;
}

export interface StageOptions {
  bucket?: string;
  originalName?: string;
  mimeType: string;
  /** The staged object; none when absent (a presigned upload whose PUT has not come). */
  content?: Buffer;
  /** The recorded size when there is no content yet: a presigned upload's declared size (default 0). */
  sizeBytes?: number;
  uploadedBy?: string;
}

/**
 * A pending_scan row and, with `content`, its staged object, as an upload the gateway received leaves
 * them; without, a presigned upload's (its key is the one the PUT goes to).
 */
export async function stageFile(db: DatabasePool, store: ObjectStore, tenantId: string, options: StageOptions): Promise<StagedFile> {
  const fileId = newId();
  const { bucket = 'assets', originalName = 'upload.bin', mimeType, content, uploadedBy = null } = options;
  const stagingKey = content ? receivedStagingKeyOf(tenantId, fileId) : presignedStagingKeyOf(tenantId, fileId);
  const sizeBytes = content?.length ?? options.sizeBytes ?? 0;
  if (content) await store.s3.putObject(store.bucket, stagingKey, content, content.length, { 'Content-Type': mimeType });
  await withTenant(db, tenantId, async (tx) => {
    await tx.query(sql.unsafe`
      INSERT INTO files (id, tenant_id, bucket, original_name, mime_type, size_bytes, status, staging_key, uploaded_by)
      VALUES (${fileId}, ${tenantId}, ${bucket}, ${originalName}, ${mimeType}, ${sizeBytes}, 'pending_scan', ${stagingKey}, ${uploadedBy})
    `);
    // Counted at upload, as the upload route counts it (docs/decisions/files.md).
    await adjustUsage(tx, 'storage_bytes', sizeBytes);
  });
  return { tenantId, fileId, stagingKey, sizeBytes };
}

export async function fileRowOf(db: DatabasePool, { tenantId, fileId }: StagedFile): Promise<FileRow> {
  const row = await withTenant(db, tenantId, (tx) => selectFile(tx, tenantId, fileId));
  if (!row) throw new Error(`no file ${fileId}`);
  return row;
}

/** The tenant's storage_bytes counter (one implementation: helpers/files.ts). */
export { storageUsageOf as storageBytesOf } from './files';
