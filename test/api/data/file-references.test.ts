import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newId } from '../../../common/ids';
import { sql } from '../../../db/pool';
import { objectKeyOf, receivedStagingKeyOf } from '../../../services/files/object-keys';
import { startDataApiStack, type DataApiStack, type DataRecord } from '../../helpers/data-api';
import { orphanedAtOf, referencesOf, setOrphanedAt } from '../../helpers/files-orphans';
import { registerAccount } from '../../helpers/identity';
import { installModule } from '../../helpers/modules';
import { send } from '../../helpers/rbac';

/**
 * The references of data-layer `file` fields (migration 0030, services/data/file-references.ts)
 * through the real gateway and PostgreSQL, with `filelab`, a module of this test (folders and their
 * notes, each note with two file fields): written in the record's transaction on create (nested too),
 * update and delete; a file the tenant cannot reference is 400 validation-error FILE_NOT_FOUND naming
 * the field, and the write is not made.
 */

let stack: DataApiStack;
let modulesDir: string;

const filelab = {
  slug: 'filelab', name: 'File lab', version: '1.0.0', description: 'test fixture: records with file fields',
  models: {
    folders: { autoApi: true, fields: { name: { type: 'text', nullable: false } } },
    notes: {
      autoApi: true,
      fields: {
        title: { type: 'text', nullable: false },
        attachment: { type: 'file' },
        cover: { type: 'file' },
        folderId: { type: 'uuid', references: { model: 'folders', field: 'id' } },
      },
    },
  },
};

beforeAll(async () => {
  modulesDir = mkdtempSync(join(tmpdir(), 'modules-filelab-'));
  mkdirSync(join(modulesDir, 'filelab'));
  writeFileSync(join(modulesDir, 'filelab', 'manifest.json'), JSON.stringify(filelab));
  stack = await startDataApiStack('data-file-references-test', { MODULES_DIR: modulesDir });
});

afterAll(async () => {
  await stack?.close();
  rmSync(modulesDir, { recursive: true, force: true });
});

interface Problem { type: string; detail: string; errors?: { field: string; code: string; message: string }[] }
type Note = DataRecord & Problem;
type Folder = DataRecord & Problem & { notes: Note[] };

interface LabTenant { token: string; tenantId: string }

async function labTenant(): Promise<LabTenant> {
  const account = await registerAccount(stack.gateway);
  expect((await installModule(stack.gateway, account.accessToken, 'filelab')).status).toBe(201);
  return { token: account.accessToken, tenantId: account.tenant.id };
}

type Status = 'pending_scan' | 'available' | 'rejected' | 'deleted' | 'purged';

/** A file row of the tenant in `status` (the files routes are other tests' subject; no object is needed here). */
async function fileOf(tenantId: string, status: Status = 'available'): Promise<{ tenantId: string; fileId: string }> {
  const fileId = newId();
  await stack.owner.query(sql.unsafe`
    INSERT INTO files (id, tenant_id, bucket, original_name, mime_type, size_bytes, status, staging_key, object_key)
    VALUES (${fileId}, ${tenantId}, 'documents', 'note.pdf', 'application/pdf', 10, ${status}, ${receivedStagingKeyOf(tenantId, fileId)},
            ${status === 'pending_scan' ? null : objectKeyOf(tenantId, 'documents', fileId)})
  `);
  return { tenantId, fileId };
}

const createNote = (tenant: LabTenant, body: Record<string, unknown>) => send<Note>(stack.gateway, 'POST', '/data/filelab/notes', tenant.token, body);
const patchNote = (tenant: LabTenant, id: string, body: Record<string, unknown>) => send<Note>(stack.gateway, 'PATCH', `/data/filelab/notes/${id}`, tenant.token, body);

const referrer = (field: string) => `data:filelab.notes.${field}`;

describe('file fields of the data layer', () => {
  it('records a reference per file field on create, moves it on update, drops it when cleared or the record is deleted', async () => {
    const tenant = await labTenant();
    const [first, second, cover] = [await fileOf(tenant.tenantId), await fileOf(tenant.tenantId), await fileOf(tenant.tenantId, 'pending_scan')];
    // A file the sweep had marked as an orphan is one no longer once referenced.
    await setOrphanedAt(stack.owner, first, Date.now());

    const created = await createNote(tenant, { title: 'Minutes', attachment: first.fileId, cover: cover.fileId });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ attachment: first.fileId, cover: cover.fileId });
    const id = created.body.id;
    expect(await referencesOf(stack.owner, tenant.tenantId)).toEqual([
      { referrer: referrer('attachment'), referrerId: id, fileId: first.fileId },
      { referrer: referrer('cover'), referrerId: id, fileId: cover.fileId },
    ]);
    expect(await orphanedAtOf(stack.owner, first)).toBeNull();

    expect((await patchNote(tenant, id, { attachment: second.fileId, title: 'Minutes v2' })).status).toBe(200);
    expect(await referencesOf(stack.owner, tenant.tenantId)).toEqual([
      { referrer: referrer('attachment'), referrerId: id, fileId: second.fileId },
      { referrer: referrer('cover'), referrerId: id, fileId: cover.fileId },
    ]);
    // A write that leaves the file fields alone leaves their references alone.
    expect((await patchNote(tenant, id, { title: 'Minutes v3' })).status).toBe(200);

    expect((await patchNote(tenant, id, { cover: null })).status).toBe(200);
    expect(await referencesOf(stack.owner, tenant.tenantId)).toEqual([{ referrer: referrer('attachment'), referrerId: id, fileId: second.fileId }]);

    expect((await send(stack.gateway, 'DELETE', `/data/filelab/notes/${id}`, tenant.token)).status).toBe(204);
    expect(await referencesOf(stack.owner, tenant.tenantId)).toEqual([]);
  });

  it('answers 400 FILE_NOT_FOUND naming the field for an unknown id, another tenant\'s file and a rejected, deleted or purged one, and writes nothing', async () => {
    const tenant = await labTenant();
    const other = await labTenant();
    const refused = [
      newId(), (await fileOf(other.tenantId)).fileId,
      (await fileOf(tenant.tenantId, 'rejected')).fileId, (await fileOf(tenant.tenantId, 'deleted')).fileId, (await fileOf(tenant.tenantId, 'purged')).fileId,
    ];
    for (const fileId of refused) {
      const answer = await createNote(tenant, { title: 'Refused', attachment: fileId });
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({
        type: stack.gateway.problemType('validation-error'), errors: [expect.objectContaining({ field: 'attachment', code: 'FILE_NOT_FOUND' })],
      });
    }
    const kept = await createNote(tenant, { title: 'Kept', attachment: (await fileOf(tenant.tenantId)).fileId });
    const refusedUpdate = await patchNote(tenant, kept.body.id, { cover: refused[1] });
    expect(refusedUpdate.status).toBe(400);
    expect(refusedUpdate.body.errors).toEqual([expect.objectContaining({ field: 'cover', code: 'FILE_NOT_FOUND' })]);

    const listed = await send<{ data: Note[] }>(stack.gateway, 'GET', '/data/filelab/notes', tenant.token);
    expect(listed.body.data.map((note) => note.title)).toEqual(['Kept']);
    expect((await referencesOf(stack.owner, tenant.tenantId)).map((reference) => reference.referrer)).toEqual([referrer('attachment')]);
    expect(await referencesOf(stack.owner, other.tenantId)).toEqual([]);
  });

  it('records the references of nested records, and refuses a nested record\'s unknown file by its path', async () => {
    const tenant = await labTenant();
    const [a, b] = [await fileOf(tenant.tenantId), await fileOf(tenant.tenantId)];
    const refused = await send<Folder>(stack.gateway, 'POST', '/data/filelab/folders', tenant.token, {
      name: 'Board', notes: [{ title: 'One', attachment: a.fileId }, { title: 'Two', attachment: newId() }],
    });
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([expect.objectContaining({ field: 'notes[1].attachment', code: 'FILE_NOT_FOUND' })]);
    expect(await referencesOf(stack.owner, tenant.tenantId)).toEqual([]);

    const created = await send<Folder>(stack.gateway, 'POST', '/data/filelab/folders', tenant.token, {
      name: 'Board', notes: [{ title: 'One', attachment: a.fileId }, { title: 'Two', attachment: b.fileId, cover: a.fileId }],
    });
    expect(created.status).toBe(201);
    const [one, two] = created.body.notes;
    expect(await referencesOf(stack.owner, tenant.tenantId)).toEqual(expect.arrayContaining([
      { referrer: referrer('attachment'), referrerId: one.id, fileId: a.fileId },
      { referrer: referrer('attachment'), referrerId: two.id, fileId: b.fileId },
      { referrer: referrer('cover'), referrerId: two.id, fileId: a.fileId },
    ]));
    expect(await referencesOf(stack.owner, tenant.tenantId)).toHaveLength(3);
  });
});
