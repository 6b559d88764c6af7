import { Client, Connection } from '@temporalio/client';
import type { Config } from '../../common/config';
import { clientInterceptors } from '../../common/temporal/client-interceptors';

export interface TemporalHandle {
  connection: Connection;
  client: Client;
}

/**
 * One connection and client per gateway process, shared by every route that starts or signals work.
 * Its interceptors carry the request context (tenant, trace, actor) of runWithRequestContext into
 * every workflow the request starts, signals or updates.
 */
export async function connectTemporal(cfg: Config['temporal']): Promise<TemporalHandle> {
  const connection = await Connection.connect({ address: cfg.address, connectTimeout: '5s' });
  const client = new Client({ connection, namespace: cfg.namespace, interceptors: clientInterceptors });
  return { connection, client };
}
