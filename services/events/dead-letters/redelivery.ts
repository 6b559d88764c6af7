import type { OutgoingRecord } from '../../../common/kafka';
import type { DeadLetterRow } from '../../../db/queries/events/dead-letters.queries';
import { EVENT_HEADERS, decodeEvent, encodeEvent } from '../envelope';
import { isTopicName } from '../topics';

/**
 * The one redelivery message of a dead letter, for DLQRetry, the REST retry and replay-all alike:
 * the stored envelope, unchanged (same event id, so every group that handled it already drops it),
 * to its original topic under its original key, with the headers encodeEvent gives every event (id,
 * type, tenantId, traceId, correlationId) and one more, `redeliverTo`: the Kafka group id of the dead
 * letter, the only group that handles the redelivery (services/events/consumers/). The stored
 * envelope is checked as a received one is, so a row that could not be consumed is never sent.
 */
export function redeliveryRecord(row: DeadLetterRow): OutgoingRecord {
  if (!isTopicName(row.topic)) throw new Error(`dead letter ${row.id}: ${row.topic} is not a topic of the catalogue`);
  const { envelope } = decodeEvent({ key: row.eventKey, value: JSON.stringify(row.envelope) });
  const message = encodeEvent({ topic: row.topic, key: row.eventKey, envelope, correlationId: row.correlationId });
  return { ...message, headers: { ...message.headers, [EVENT_HEADERS.redeliverTo]: row.consumerGroup } };
}
