import { z } from 'zod';
import { sql, type DatabaseTransactionConnection } from '../../pool';

const moneyLimits = z.object({ planId: z.string(), maxTxAmount: z.number(), maxBalance: z.number() });
export type MoneyLimits = z.infer<typeof moneyLimits>;

/**
 * The money limits of the tenant's current plan (plans.limits of migration 0002), read under
 * withTenant for the tenant it names. A plan without them gets the defaults of DECISIONS.md (Billing: 10,000,000 and
 * 100,000,000 minor units); null when the tenant has no subscription.
 */
export function selectMoneyLimits(tx: DatabaseTransactionConnection, tenantId: string): Promise<MoneyLimits | null> {
  return tx.maybeOne(sql.type(moneyLimits)`
    SELECT p.id AS "planId",
           coalesce((p.limits ->> 'maxTxAmount')::bigint, 10000000) AS "maxTxAmount",
           coalesce((p.limits ->> 'maxBalance')::bigint, 100000000) AS "maxBalance"
    FROM subscriptions s JOIN plans p ON p.id = s.plan_id
    WHERE s.tenant_id = ${tenantId}
  `);
}
