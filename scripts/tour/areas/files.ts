import { brief, check, expectStatus, problemOf } from '../expect';
import type { Http } from '../http';
import { png } from '../png';
import { short, type State } from '../state';
import type { Tour } from '../steps';
import { waitUntil } from '../wait';

// Uploads through the malware scan: two clean files downloaded back, and the EICAR string rejected.

interface FileObject {
  id: string;
  status: string;
  mimeType: string;
  size: number;
}

export async function files(tour: Tour, http: Http, state: State): Promise<void> {
  const owner = state.owner;
  await tour.area('files', owner ? null : 'needs the owner session of identity', async (step) => {
    const { token } = owner!;
    const upload = async (bytes: Buffer, name: string, mimeType: string, bucket: string) => {
      const form = new FormData();
      form.append('bucket', bucket);
      form.append('originalName', name);
      form.append('mimeType', mimeType);
      form.append('file', new Blob([bytes], { type: mimeType }), name);
      const answer = await http.send<FileObject>('POST', '/v1/files/upload', { token, form });
      expectStatus(answer, 201);
      check(answer.body.status === 'pending_scan' && answer.body.size === bytes.length, `expected pending_scan of ${bytes.length} bytes, got ${brief(answer)}`);
      return answer.body.id;
    };
    const image = png(8, 8);
    const text = Buffer.from(`Hello from the tour ${state.runId}\n`);
    // The EICAR test string, in two halves as scripts/infra/install.sh keeps it, so this file is not flagged.
    const eicar = Buffer.from(['X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD', '-ANTIVIRUS-TEST-FILE!$H+H*'].join(''));
    const ids = { png: '', text: '', eicar: '' };
    await step('upload a PNG (multipart)', async () => {
      ids.png = await upload(image, 'pixel.png', 'image/png', 'assets');
      return `201 pending_scan ${short(ids.png)}`;
    });
    await step('upload a text file (multipart)', async () => {
      ids.text = await upload(text, 'hello.txt', 'text/plain', 'documents');
      return `201 pending_scan ${short(ids.text)}`;
    });
    await step('both pass the malware scan', async () => {
      const started = Date.now();
      for (const id of [ids.png, ids.text]) {
        await waitUntil(`file ${id} available`, async () => {
          const answer = await http.get<FileObject>(`/v1/files/${id}?meta=1`, token);
          // 404 while pending_scan; anything else is an answer the tour does not expect.
          expectStatus(answer, 200, 404);
          if (answer.status === 200) check(answer.body.status === 'available', `expected available, got ${brief(answer)}`);
          return [answer.status === 200 ? true : undefined, `${answer.status} ${problemOf(answer) ?? ''}`];
        });
      }
      return `200 available after ${Date.now() - started} ms`;
    });
    await step('download the text file', async () => {
      const answer = await http.get(`/v1/files/${ids.text}?download=1`, token);
      expectStatus(answer, 200);
      check(answer.bytes.equals(text), `expected the uploaded bytes, got ${brief(answer)}`);
      check(/attachment/.test(answer.headers.get('content-disposition') ?? ''), 'expected Content-Disposition: attachment');
      return `200 ${answer.bytes.length} bytes, same content`;
    });
    await step('download the PNG through its presigned URL', async () => {
      const redirect = await http.get(`/v1/files/${ids.png}`, token);
      expectStatus(redirect, 302);
      const location = redirect.headers.get('location');
      check(location !== null, 'expected a Location header');
      const content = await http.send('GET', location, {});
      expectStatus(content, 200);
      check(content.bytes.equals(image), `expected the PNG's ${image.length} bytes, got ${content.bytes.length}`);
      return `302 → 200 ${content.bytes.length} bytes, same content`;
    });
    await step('upload the EICAR test string', async () => {
      ids.eicar = await upload(eicar, 'eicar.txt', 'text/plain', 'documents');
      return `201 pending_scan ${short(ids.eicar)}`;
    });
    await step('the scan rejects it', async () => {
      const started = Date.now();
      await waitUntil(`file ${ids.eicar} rejected`, async () => {
        const answer = await http.get(`/v1/files/${ids.eicar}?meta=1`, token);
        expectStatus(answer, 404, 422);
        if (answer.status === 422) check(problemOf(answer) === 'file-rejected', `expected 422 file-rejected, got ${brief(answer)}`);
        return [answer.status === 422 ? true : undefined, `${answer.status} ${problemOf(answer) ?? ''}`];
      });
      return `422 file-rejected after ${Date.now() - started} ms`;
    });
    state.files = ids;
  });
}
