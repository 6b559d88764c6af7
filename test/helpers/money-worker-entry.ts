import { runDomainWorkerProcess } from './domain-worker-process';

/**
 * The money domain's Worker alone on the task queue MONEY_TASK_QUEUE names (config.moneyFlows.taskQueue,
 * the queue the gateway starts money workflows on). Run as a child process (test/helpers/money-worker.ts)
 * by the crash test, which SIGKILLs it, and by bench/money-flows.bench.ts.
 */
runDomainWorkerProcess({
  domain: 'money',
  taskQueue: (cfg) => cfg.moneyFlows.taskQueue,
  appPoolSize: (cfg) => cfg.db.poolSize,
  activities: ({ money }) => money,
});
