import Joi from 'joi';
import { keysetPageOf, positionOf, type KeysetPage, type KeysetPageRequest } from '../../../common/pagination';
import { problems } from '../../../common/problems';
import {
  selectDeadLetter, selectDeadLetters, type DeadLetterFilter, type DeadLetterKeyset,
} from '../../../db/queries/events/dead-letters.queries';
import { withTenant } from '../../../db/tenant';
import type { DeadLetterDeps } from './deps';
import { deadLetterView, type DeadLetterView } from './views';

/** The list's position as its tokens carry it: dead_lettered_at to the microsecond, and the id. */
const deadLetterPosition = Joi.object<DeadLetterKeyset>({ at: Joi.string().isoDate(), id: Joi.string().guid() });

/**
 * GET /integrations/dlq: the tenant's dead letters, newest first, filtered by status, consumer group
 * and event type, in either page envelope (page_size/page_token or limit/cursor,
 * docs/reference/conventions.md#rule-11 and #rule-13).
 */
export async function listDeadLetters(
  deps: Pick<DeadLetterDeps, 'db'>, tenantId: string, filter: DeadLetterFilter, page: KeysetPageRequest,
): Promise<KeysetPage<DeadLetterView>> {
  const after = positionOf(page, deadLetterPosition);
  // One row more than the page tells whether another page exists.
  const rows = await withTenant(deps.db, tenantId, (tx) => selectDeadLetters(tx, tenantId, filter, after, page.size + 1));
  return keysetPageOf(rows, page, (row) => ({ at: row.position, id: row.id }), (row) => deadLetterView(row));
}

/** GET /integrations/dlq/:id: one dead letter of the tenant; an unknown id and another tenant's are 404 not-found. */
export async function readDeadLetter(deps: Pick<DeadLetterDeps, 'db'>, tenantId: string, id: string): Promise<DeadLetterView> {
  const row = await withTenant(deps.db, tenantId, (tx) => selectDeadLetter(tx, tenantId, id));
  if (!row) throw problems.notFound('dead letter');
  return deadLetterView(row);
}
