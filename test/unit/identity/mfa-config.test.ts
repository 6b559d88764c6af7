import { randomBytes } from 'node:crypto';
import { ConfigError, loadConfig } from '../../../common/config';
import { productionEnvironment } from '../../helpers/production-config';

/** MFA_ENCRYPTION_KEY: a public default for development, never accepted in production. */
const DEV_KEY = loadConfig({}).identity.mfa.encryptionKey;

describe('MFA_ENCRYPTION_KEY', () => {
  it('has a 32-byte development default and the recovery limits of docs/reference/identity.md#rule-22', () => {
    const config = loadConfig({});
    expect(Buffer.from(config.identity.mfa.encryptionKey, 'base64')).toHaveLength(32);
    expect(config.identity.recovery).toEqual({ maxAttempts: 5, windowSeconds: 900, lockSeconds: 3600, accountLockFailures: 15 });
  });

  it('must be set in production, and not to the development key', () => {
    expect(() => loadConfig({ ...productionEnvironment(), MFA_ENCRYPTION_KEY: undefined })).toThrow(ConfigError);
    expect(() => loadConfig({ ...productionEnvironment(), MFA_ENCRYPTION_KEY: DEV_KEY })).toThrow(/MFA_ENCRYPTION_KEY/);
    const own = randomBytes(32).toString('base64');
    expect(loadConfig({ ...productionEnvironment(), MFA_ENCRYPTION_KEY: own }).identity.mfa.encryptionKey).toBe(own);
  });

  it('must be 32 bytes of base64', () => {
    expect(() => loadConfig({ MFA_ENCRYPTION_KEY: randomBytes(16).toString('base64') })).toThrow(/MFA_ENCRYPTION_KEY/);
    expect(() => loadConfig({ MFA_ENCRYPTION_KEY: 'not base64!' })).toThrow(/MFA_ENCRYPTION_KEY/);
  });
});
