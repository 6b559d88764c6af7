import { Client, Connection } from '@temporalio/client';
import type { Config } from '../../common/config';

export interface TemporalHandle {
  connection: Connection;
  client: Client;
}

/** One connection and client per gateway process, shared by every route that starts or signals work. */
export async function connectTemporal(cfg: Config['temporal']): Promise<TemporalHandle> {
  const connection = await Connection.connect({ address: cfg.address, connectTimeout: '5s' });
  const client = new Client({ connection, namespace: cfg.namespace });
  return { connection, client };
}
