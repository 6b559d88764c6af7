import { z } from 'zod';
import { newId } from '../../common/ids';
import type { ObjectStore } from '../../common/object-store';
import { sql, type DatabasePool } from '../../db/pool';
import { objectKeyOf, stagingPrefixOf } from '../../services/files/object-keys';
import type { TestGateway } from './app';
import { call, type JsonResponse } from './http';

/**
 * The files routes' tests: multipart forms in the order a test chooses, uploads through the real
 * gateway, and what the object store holds under a tenant's staging prefix.
 */

export const MB = 1024 * 1024;

/** A file as the API answers it (docs/reference/files.md, Resources). */
export interface FileObject {
  id: string;
  originalName: string;
  mimeType: string;
  size: number;
  bucket: string;
  status: string;
  url: string | null;
  uploadedBy: string | null;
  tenantId: string;
  createdAt: string;
  deletedAt: string | null;
  meta?: Record<string, unknown> | null;
  thumbnails?: Record<string, string>;
}

export interface Problem {
  type: string;
  status: number;
  detail: string;
  errors?: { field: string; code: string; message: string }[];
  [member: string]: unknown;
}

/** A form part: a text field, or the file (its bytes and the file name the part carries). */
export type FormPart = [name: string, value: string] | [name: string, file: { bytes: Uint8Array; filename: string; type?: string }];

/** The parts in the order given, as a browser's FormData sends them. */
export function formOf(parts: readonly FormPart[]): FormData {
  const form = new FormData();
  for (const [name, value] of parts) {
    if (typeof value === 'string') form.append(name, value);
    else form.append(name, new Blob([value.bytes], { type: value.type ?? 'application/octet-stream' }), value.filename);
  }
  return form;
}

/** The usual form: the text fields first, then the file. */
export function uploadParts(
  bytes: Uint8Array, fields: Record<string, string> = {}, filename = 'upload.bin',
): FormPart[] {
  const text = { bucket: 'documents', originalName: filename, ...fields };
  return [...Object.entries(text), ['file', { bytes, filename }]];
}

export function uploadForm<T = FileObject>(gateway: TestGateway, token: string, body: FormData | string, headers: Record<string, string> = {}): Promise<JsonResponse<T>> {
  return call<T>(`${gateway.baseUrl}/v1/files/upload`, { method: 'POST', headers: { authorization: `Bearer ${token}`, ...headers }, body });
}

export function upload<T = FileObject>(gateway: TestGateway, token: string, parts: readonly FormPart[]): Promise<JsonResponse<T>> {
  return uploadForm<T>(gateway, token, formOf(parts));
}

/** GET under /v1 with the token; redirects are not followed. */
export function read<T = FileObject>(gateway: TestGateway, path: string, token: string): Promise<JsonResponse<T>> {
  return call<T>(`${gateway.baseUrl}/v1${path}`, { headers: { authorization: `Bearer ${token}` }, redirect: 'manual' });
}

/** The keys the store holds under a prefix. */
export async function keysUnder(store: ObjectStore, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const item of store.s3.listObjectsV2(store.bucket, prefix, true)) keys.push((item as { name: string }).name);
  return keys;
}

export function stagedKeysOf(store: ObjectStore, tenantId: string): Promise<string[]> {
  return keysUnder(store, stagingPrefixOf(tenantId));
}

/** The keys of multipart uploads begun and never completed under the tenant's staging prefix. */
export async function unfinishedStagingUploadsOf(store: ObjectStore, tenantId: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const item of store.s3.listIncompleteUploads(store.bucket, stagingPrefixOf(tenantId), true)) keys.push(item.key);
  return keys;
}

/**
 * What a clean scan leaves (the scan workflow is another test's subject): the stored object at the
 * file's final key (stored with `storedAs` as its type), and the row available, written as the owner
 * role. Thumbnails: {preset: bytes}.
 */
export async function makeAvailable(
  owner: DatabasePool, store: ObjectStore, file: Pick<FileObject, 'id' | 'tenantId' | 'bucket' | 'mimeType'>, bytes: Buffer, thumbnails: Record<string, Buffer> = {},
  storedAs = file.mimeType,
): Promise<void> {
  const objectKey = objectKeyOf(file.tenantId, file.bucket, file.id);
  await store.s3.putObject(store.bucket, objectKey, bytes, bytes.length, { 'Content-Type': storedAs });
  const thumbnailKeys: Record<string, string> = {};
  for (const [preset, content] of Object.entries(thumbnails)) {
    thumbnailKeys[preset] = `${file.tenantId}/${file.bucket}/${file.id}/thumbnails/${preset}.webp`;
    await store.s3.putObject(store.bucket, thumbnailKeys[preset], content, content.length, { 'Content-Type': 'image/webp' });
  }
  await owner.query(sql.unsafe`
    UPDATE files SET status = 'available', object_key = ${objectKey}, thumbnails = ${sql.jsonb(thumbnailKeys)}, scanned_at = now()
    WHERE id = ${file.id}
  `);
}

export async function setStatus(owner: DatabasePool, fileId: string, status: 'rejected' | 'deleted'): Promise<void> {
  await owner.query(sql.unsafe`
    UPDATE files SET status = ${status}, deleted_at = ${status === 'deleted' ? sql.fragment`now()` : null} WHERE id = ${fileId}
  `);
}

export function storageUsageOf(owner: DatabasePool, tenantId: string): Promise<number> {
  return owner.oneFirst(sql.type(z.object({ value: z.number() }))`
    SELECT coalesce((SELECT value FROM usage_counters WHERE tenant_id = ${tenantId} AND metric = 'storage_bytes'), 0) AS value
  `);
}

/** The storage_bytes limit of the tenant's plan (a new tenant's trial plan). */
export function storageLimitOf(owner: DatabasePool, tenantId: string): Promise<number> {
  return owner.oneFirst(sql.type(z.object({ value: z.number() }))`
    SELECT (p.limits ->> 'storageBytes')::bigint AS value FROM subscriptions s JOIN plans p ON p.id = s.plan_id WHERE s.tenant_id = ${tenantId}
  `);
}

export async function setStorageUsage(owner: DatabasePool, tenantId: string, bytes: number): Promise<void> {
  await owner.query(sql.unsafe`
    INSERT INTO usage_counters (tenant_id, metric, value) VALUES (${tenantId}, 'storage_bytes', ${bytes})
    ON CONFLICT (tenant_id, metric) DO UPDATE SET value = ${bytes}
  `);
}

/** A task queue no worker polls: the scans the gateway starts stay queued, so files stay pending_scan. */
export function unpolledTaskQueue(): string {
  return `files-gateway-test-${newId()}`;
}
