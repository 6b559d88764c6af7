import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import type { Config } from '../common/config';

/** DATABASE_SSL_MODE and DATABASE_SSL_CA_FILE (common/config/db.ts). */
export type DatabaseSsl = Config['db']['ssl'];

/**
 * node-postgres's `ssl` option for the configured mode, with libpq's meaning of each mode (node-postgres
 * itself reads a URL's `sslmode=require` as verify-full, which is why the URLs may not carry one):
 *
 * | mode        | encrypted | certificate chain checked | host name checked |
 * |-------------|-----------|---------------------------|-------------------|
 * | disable     | no        | -                         | -                 |
 * | require     | yes       | no                        | no                |
 * | verify-ca   | yes       | against the CA file       | no                |
 * | verify-full | yes       | against the CA file       | yes (the URL's host, an IP address included) |
 *
 * Every connection path takes its option from here: the slonik pools (db/pool.ts), the pipelined
 * reads (db/tenant-reads.ts), the LISTEN connections (db/pg-channel-listener.ts) and the migration
 * runner (db/migrate.ts), each with the process's settings (config().db.ssl) unless its caller names
 * others. It is never undefined: node-postgres would then read PGSSLMODE from the environment behind
 * the configuration's back.
 */
export function pgSsl(settings: DatabaseSsl): false | ConnectionOptions {
  switch (settings.mode) {
    case 'disable':
      return false;
    case 'require':
      return { rejectUnauthorized: false };
    case 'verify-ca':
      return { ca: readCa(settings), checkServerIdentity: () => undefined };
    case 'verify-full':
      return { ca: readCa(settings) };
  }
}

function readCa({ mode, caFile }: DatabaseSsl): string {
  // The configuration refuses verify-ca and verify-full without a CA file; settings built by hand may not.
  if (!caFile) throw new Error(`DATABASE_SSL_MODE=${mode} needs DATABASE_SSL_CA_FILE`);
  return readFileSync(caFile, 'utf8');
}
