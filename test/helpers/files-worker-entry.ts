import { runDomainWorkerProcess } from './domain-worker-process';

type Activity = (...args: never[]) => Promise<unknown>;

/**
 * The files domain's Worker alone on FILES_TASK_QUEUE at TEMPORAL_ADDRESS. Run as a child process by
 * the crash test (test/workflows/file-scan.workflow.test.ts), which SIGKILLs it at a point of its
 * choosing: the activity named by FILE_SCAN_CRASH_AFTER does its real work, logs `file scan crash
 * point` and then never reports back, as if the process died right after the work and before
 * Temporal heard of it.
 */
runDomainWorkerProcess({
  domain: 'files',
  taskQueue: (cfg) => cfg.files.taskQueue,
  appPoolSize: () => 4,
  activities: ({ files, notify }, logger) => {
    const crashAfter = process.env.FILE_SCAN_CRASH_AFTER as keyof typeof files | undefined;
    const activities: Record<string, Activity> = { ...files, ...notify };
    if (crashAfter) {
      const work = files[crashAfter] as (...args: unknown[]) => Promise<unknown>;
      activities[crashAfter] = async (...args: unknown[]) => {
        await work(...args);
        logger.info({ activity: crashAfter }, 'file scan crash point');
        return new Promise(() => undefined);
      };
    }
    return activities;
  },
});
