import { randomUUID } from 'node:crypto';
import { check, expectStatus, problemOf } from '../expect';
import { followJob } from '../follow-job';
import type { Http } from '../http';
import type { State } from '../state';
import type { Tour } from '../steps';

// Long work answered 202 with a job to follow: the PNG of files resized.

export async function jobs(tour: Tour, http: Http, state: State): Promise<void> {
  const owner = state.owner;
  await tour.area('jobs', !owner ? 'needs the owner session of identity' : state.files ? null : 'needs the PNG of files', async (step) => {
    const { token } = owner!;
    let jobId = '';
    await step('process the PNG (resize)', async () => {
      const answer = await http.post<{ jobId: string; status: string }>(`/v1/files/${state.files!.png}/process`, { operations: [{ resize: { width: 4 } }] }, token);
      expectStatus(answer, 202);
      jobId = answer.body.jobId;
      check(answer.headers.get('location') === `/v1/jobs/${jobId}`, `expected Location: /v1/jobs/${jobId}, got ${answer.headers.get('location')}`);
      return `202 ${jobId}`;
    });
    await step('follow /v1/jobs/{id} until completed', async () => {
      const started = Date.now();
      const job = await followJob(http, jobId, token);
      check(job.status === 'completed' && job.result?.width === 4 && job.result?.height === 4, `expected a completed 4×4 result, got ${JSON.stringify(job)}`);
      return `200 completed ${String(job.result.mimeType)} 4×4 after ${Date.now() - started} ms`;
    });
    await step('an unknown job is 404', async () => {
      const answer = await http.get(`/v1/jobs/files-process.${randomUUID()}`, token);
      expectStatus(answer, 404);
      return `404 ${problemOf(answer) ?? ''}`.trim();
    });
  });
}
