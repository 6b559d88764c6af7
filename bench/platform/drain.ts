import type { Client as TemporalClient } from '@temporalio/client';
import { temporal as proto } from '@temporalio/proto';
import { z } from 'zod';
import type { Admin } from '../../common/kafka';
import { committedOffsets, committedTopics, describeGroup, topicBounds } from '../../common/kafka-groups';
import { taskQueues } from '../../common/temporal/task-queues';
import { sql, type DatabasePool } from '../../db/pool';

/**
 * What must be back to zero once the load of `npm run bench:platform` stops: the work the platform
 * accepted and has not finished yet. Kafka consumer lag of every group with members, the backlogs of
 * Temporal's task queues, and the outbox, scan queue and audit buffer PostgreSQL holds (what the
 * gateway's /metrics shows operators across tenants, docs/operations.md).
 */

/** One queue of unfinished work, and how much waits in it. */
export interface Backlog { name: string; waiting: number }

/** Every consumer group that has members: the messages of its topics it has not passed. */
export async function consumerLags(admin: Admin): Promise<Backlog[]> {
  const { groups } = await admin.listGroups();
  const lags: Backlog[] = [];
  for (const { groupId } of groups) {
    // A group without members (a test's, a stream that ended) waits for nobody; its lag is no backlog.
    if ((await describeGroup(admin, groupId)).members === 0) continue;
    for (const topic of await committedTopics(admin, groupId)) {
      const high = new Map((await topicBounds(admin, topic)).map(({ partition, high: end }) => [partition, end]));
      const behind = (await committedOffsets(admin, groupId, topic))
        .reduce((sum, { partition, offset }) => sum + Number((high.get(partition) ?? offset) - offset), 0);
      lags.push({ name: `kafka ${groupId} on ${topic}`, waiting: behind });
    }
  }
  return lags;
}

/** The approximate backlog of each of the platform's task queues, for workflow and activity tasks. */
export async function taskQueueBacklogs(temporal: TemporalClient): Promise<Backlog[]> {
  const types = [proto.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW, proto.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY];
  const backlogs: Backlog[] = [];
  for (const name of Object.values(taskQueues)) {
    for (const taskQueueType of types) {
      const { stats } = await temporal.workflowService.describeTaskQueue({
        namespace: temporal.options.namespace, taskQueue: { name }, taskQueueType, reportStats: true,
      });
      const kind = taskQueueType === types[0] ? 'workflow' : 'activity';
      backlogs.push({ name: `temporal ${name} (${kind} tasks)`, waiting: Number(stats?.approximateBacklogCount ?? 0) });
    }
  }
  return backlogs;
}

/**
 * The run's tenants' outbox rows not yet published, files waiting for their scan, and records in the
 * audit intake's fallback buffer. Only the run's: a test that terminated its tenant's workflows may
 * have left a file waiting for a scan that will never come, which is no work of this run.
 */
export async function databaseBacklogs(owner: DatabasePool, tenantIds: readonly string[]): Promise<Backlog[]> {
  const tenants = sql.array(tenantIds, 'uuid');
  const row = await owner.one(sql.type(z.object({ outbox: z.number(), scans: z.number(), buffered: z.number() }))`
    SELECT (SELECT count(*)::int FROM outbox_events WHERE published_at IS NULL AND tenant_id = ANY(${tenants})) AS outbox,
           (SELECT count(*)::int FROM files WHERE status = 'pending_scan' AND tenant_id = ANY(${tenants})) AS scans,
           (SELECT count(*)::int FROM audit_fallback_buffer WHERE tenant_id = ANY(${tenants})) AS buffered`);
  return [
    { name: 'postgres outbox', waiting: row.outbox }, { name: 'postgres files pending scan', waiting: row.scans },
    { name: 'postgres audit fallback buffer', waiting: row.buffered },
  ];
}

/** The queues that still hold work. */
export function judgeDrained(backlogs: readonly Backlog[]): string[] {
  return backlogs.filter(({ waiting }) => waiting > 0).map(({ name, waiting }) => `${name}: ${waiting} still waiting`);
}
