import { expectStatus, type Problem } from './expect';
import type { Http } from './http';
import { WAIT_MS } from './timeouts';
import { waitUntil } from './wait';

// The one job resource of every kind of long work (money answered 202, file processing), followed until it ends.

export interface Job {
  jobId: string;
  kind: string;
  status: 'running' | 'completed' | 'failed' | 'canceled';
  result?: Record<string, unknown>;
  error?: Problem;
}

export async function followJob(http: Http, jobId: string, token: string): Promise<Job> {
  return waitUntil(`job ${jobId} to finish`, async () => {
    const answer = await http.get<Job>(`/v1/jobs/${jobId}`, token);
    expectStatus(answer, 200);
    return [answer.body.status === 'running' ? undefined : answer.body, answer.body.status];
  }, WAIT_MS, 300);
}
