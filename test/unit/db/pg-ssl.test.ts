import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rootCertificates, type PeerCertificate } from 'node:tls';
import { pgSsl } from '../../../db/pg-ssl';

/**
 * DATABASE_SSL_MODE as node-postgres's ssl option, with libpq's meaning of each mode (db/pg-ssl.ts).
 * test/integration/tls-connections.int.test.ts connects with them to the local server.
 */
const dir = mkdtempSync(join(tmpdir(), 'pg-ssl-'));
const caFile = join(dir, 'ca.crt');
const ca = rootCertificates[0];
writeFileSync(caFile, ca);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A certificate for another host than the one dialled, as tls.checkServerIdentity sees it. */
const otherHost = { subject: { CN: 'other.example' }, subjectaltname: 'DNS:other.example' } as unknown as PeerCertificate;

describe('pgSsl', () => {
  it.each([
    ['disable', false],
    // Encrypted, but any certificate is accepted (libpq's require without a root certificate).
    ['require', { rejectUnauthorized: false }],
  ] as const)('%s', (mode, option) => {
    expect(pgSsl({ mode })).toEqual(option);
  });

  it('verify-ca checks the chain against the CA file, not the host name', () => {
    const option = pgSsl({ mode: 'verify-ca', caFile });
    expect(option).toMatchObject({ ca });
    expect(option && option.rejectUnauthorized).not.toBe(false);
    expect(option && option.checkServerIdentity?.('db.internal', otherHost)).toBeUndefined();
  });

  it('verify-full checks the chain against the CA file and the host name (Node\'s own check)', () => {
    const option = pgSsl({ mode: 'verify-full', caFile });
    expect(option).toEqual({ ca });
  });

  it('needs a CA file to verify', () => {
    expect(() => pgSsl({ mode: 'verify-full' })).toThrow('DATABASE_SSL_MODE=verify-full needs DATABASE_SSL_CA_FILE');
    expect(() => pgSsl({ mode: 'verify-ca' })).toThrow('DATABASE_SSL_MODE=verify-ca needs DATABASE_SSL_CA_FILE');
  });
});
