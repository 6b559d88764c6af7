import { Client, Connection } from '@temporalio/client';
import type { Config } from '../config';
import { clientInterceptors } from './client-interceptors';
import { temporalConnectionOptions } from './connection-options';
import { platformDataConverter } from './data-converter';

export interface TemporalHandle {
  connection: Connection;
  client: Client;
}

/**
 * One connection and client per gateway process, shared by every route that starts or signals work.
 * Its interceptors carry the request context (tenant, trace, actor) of runWithRequestContext into
 * every workflow the request starts, signals or updates; its data converter encrypts every payload
 * (common/temporal/payload-codec.ts), as the workers' does; its TLS and credentials are the workers'
 * too (common/temporal/connection-options.ts).
 */
export async function connectTemporal(cfg: Config['temporal'], codec: Config['temporalCodec']): Promise<TemporalHandle> {
  const dataConverter = await platformDataConverter(codec);
  // A failed Connection.connect() leaves its gRPC channel open with reconnect timers running; a lazy
  // connection can be closed when the first contact fails, so retried start-ups leak nothing.
  const connection = Connection.lazy({ ...temporalConnectionOptions(cfg), connectTimeout: '5s' });
  try {
    await connection.ensureConnected();
  } catch (error) {
    await connection.close();
    throw error;
  }
  const client = new Client({ connection, namespace: cfg.namespace, interceptors: clientInterceptors, dataConverter });
  return { connection, client };
}
