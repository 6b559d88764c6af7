import type { Caller } from '../../common/context';
import { authOf } from '../context';
import type { RouteContext } from '../http/route-registry';

/** Who is acting, for domain operations that audit their changes: the verified tenant and user, with IP and agent. */
export function callerOf(ctx: RouteContext<unknown, unknown, unknown>): Caller {
  const auth = authOf(ctx);
  return { tenantId: auth.tenantId, userId: auth.userId, ip: ctx.ip || null, userAgent: ctx.get('user-agent') || null };
}
