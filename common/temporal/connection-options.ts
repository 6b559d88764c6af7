import { readFileSync } from 'node:fs';
import type { Config } from '../config';

/** The TLS of a Temporal connection, in the shape the client's Connection and the worker's NativeConnection both take. */
export interface TemporalTls {
  serverNameOverride?: string;
  serverRootCACertificate?: Buffer;
  clientCertPair?: { crt: Buffer; key: Buffer };
}

/** What every Temporal connection of the platform is opened with: the gateway's and the workers'. */
export interface TemporalConnectionOptions {
  address: string;
  tls?: TemporalTls;
  apiKey?: string;
}

/**
 * The address, TLS and credentials of every Temporal connection (`Connection.lazy` in
 * common/temporal/client.ts, `NativeConnection.connect` in the workers, scripts and benches), so the
 * gateway and the workers never reach the server differently. TLS is on with a client certificate,
 * a CA file or an API key (docs/decisions/platform.md, TLS); the files are read here, at connection
 * time, as the other clients' factories read theirs. With an API key and no other setting, TLS is
 * `{}`: the server is checked against the public CAs, as Temporal Cloud needs.
 */
export function temporalConnectionOptions(cfg: Config['temporal']): TemporalConnectionOptions {
  const { certFile, keyFile, caFile, serverName } = cfg.tls;
  const tlsOn = certFile !== undefined || caFile !== undefined || cfg.apiKey !== undefined;
  if (!tlsOn) return { address: cfg.address };
  const tls: TemporalTls = {
    ...(serverName && { serverNameOverride: serverName }),
    ...(caFile && { serverRootCACertificate: readFileSync(caFile) }),
    ...(certFile && keyFile && { clientCertPair: { crt: readFileSync(certFile), key: readFileSync(keyFile) } }),
  };
  return { address: cfg.address, tls, ...(cfg.apiKey && { apiKey: cfg.apiKey }) };
}
