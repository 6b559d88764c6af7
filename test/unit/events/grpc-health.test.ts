import { EventServiceServing, type ServingStatus } from '../../../api/grpc/health';
import { waitFor } from '../../helpers/http';

/** The EventService's gRPC serving status (api/grpc/health.ts): the broker's answer, its changes told to watchers. */
describe('EventServiceServing', () => {
  let answers: boolean | 'fails' = true;
  let checks = 0;
  const serving = new EventServiceServing(() => {
    checks += 1;
    return answers === 'fails' ? Promise.reject(new Error('no answer')) : Promise.resolve(answers);
  }, 10);

  afterAll(() => serving.close());

  it('is SERVING while the broker answers, NOT_SERVING when it does not or the check fails', async () => {
    answers = true;
    expect(await serving.current()).toBe('SERVING');
    answers = false;
    expect(await serving.current()).toBe('NOT_SERVING');
    answers = 'fails';
    expect(await serving.current()).toBe('NOT_SERVING');
  });

  it('tells a watcher each change once, checking again while anyone watches', async () => {
    answers = true;
    await serving.current();
    const seen: ServingStatus[] = [];
    const stop = serving.watch((status) => seen.push(status));
    answers = false;
    await waitFor('NOT_SERVING told', () => Promise.resolve(seen.length === 1), 5000, 5);
    answers = true;
    await waitFor('SERVING told', () => Promise.resolve(seen.length === 2), 5000, 5);
    expect(seen).toEqual(['NOT_SERVING', 'SERVING']);
    stop();
    const after = checks;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(checks).toBe(after);
  });

  it('shares one check among concurrent callers', async () => {
    const before = checks;
    await Promise.all([serving.current(), serving.current(), serving.current()]);
    expect(checks).toBe(before + 1);
  });
});
