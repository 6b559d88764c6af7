import { readOnlyDsn } from '../../../api/runtime/connections';

describe('the analytics connection string', () => {
  it('asks PostgreSQL for read-only transactions by default', () => {
    const dsn = new URL(readOnlyDsn('postgres://app:pw@127.0.0.1:5432/platform'));
    expect(dsn.searchParams.get('options')).toBe('-c default_transaction_read_only=on');
    expect(`${dsn.username}:${dsn.password}@${dsn.host}${dsn.pathname}`).toBe('app:pw@127.0.0.1:5432/platform');
  });

  it('keeps options the URL already had', () => {
    const dsn = new URL(readOnlyDsn('postgres://app@db/platform?options=-c%20statement_timeout%3D5s&application_name=reports'));
    expect(dsn.searchParams.get('options')).toBe('-c statement_timeout=5s -c default_transaction_read_only=on');
    expect(dsn.searchParams.get('application_name')).toBe('reports');
  });
});
