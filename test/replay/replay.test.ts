import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import type { DataConverter } from '@temporalio/common';
import { config } from '../../common/config';
import { platformDataConverter } from '../../common/temporal/data-converter';
import { platformBundle } from '../helpers/temporal';

/**
 * Every committed history (test/replay/histories/<workflowType>/*.json, recorded with
 * scripts/record-history.ts) must replay against today's workflow code: a change that would break a
 * running workflow fails here, before it is deployed (docs/decisions/testing.md). The one history under broken/
 * comes from a variant that is deliberately incompatible, and must fail, so a green run means something.
 */
const historiesDir = join(__dirname, 'histories');
const brokenDir = join(__dirname, 'broken');

interface RecordedHistory {
  workflowId: string;
  history: unknown;
}

function readHistory(dir: string, file: string, name: string): RecordedHistory {
  return { workflowId: name, history: JSON.parse(readFileSync(join(dir, file), 'utf8')) };
}

function committedHistories(): RecordedHistory[] {
  return readdirSync(historiesDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((type) => readdirSync(join(historiesDir, type.name))
      .filter((file) => file.endsWith('.json'))
      .map((file) => readHistory(join(historiesDir, type.name), file, `${type.name}/${file}`)));
}

describe('replay of recorded workflow histories', () => {
  let workflowBundle: WorkflowBundleWithSourceMap;
  // The workers' own data converter: histories recorded before payloads were encrypted pass its codec unchanged.
  let dataConverter: DataConverter;

  beforeAll(async () => {
    [workflowBundle, dataConverter] = await Promise.all([platformBundle(), platformDataConverter(config().temporalCodec)]);
  });

  it('replays every committed history without a determinism error', async () => {
    const histories = committedHistories();
    expect(histories.length).toBeGreaterThan(0);

    const failures: string[] = [];
    for await (const result of Worker.runReplayHistories({ workflowBundle, dataConverter, replayName: 'committed histories' }, histories)) {
      if (result.error) failures.push(`${result.workflowId}: ${result.error.name}: ${result.error.message}`);
    }
    expect(failures).toEqual([]);
  });

  it('fails on a history whose workflow started a timer where today\'s code schedules the activity', async () => {
    const { history } = readHistory(brokenDir, 'expire-stale-records.timer-first.json', 'broken');

    const failure = await Worker.runReplayHistory({ workflowBundle, dataConverter, replayName: 'broken history' }, history)
      .catch((err: unknown) => err);

    expect(failure).toBeInstanceOf(DeterminismViolationError);
    expect((failure as Error).message).toMatch(/Nondeterminism error.*TimerStarted/);
  });
});
