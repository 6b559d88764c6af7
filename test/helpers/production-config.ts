import { generateKeyPairSync, randomBytes } from 'node:crypto';

/**
 * An environment production accepts (common/config/production.ts): every secret its own, the keys
 * provisioned, no development switch. Tests change one variable of it to see that one refused.
 */
export function productionEnvironment(): Record<string, string | undefined> {
  return {
    NODE_ENV: 'production',
    DATABASE_URL: 'postgres://platform_app:app-6b1f0c@db.internal:5432/platform',
    DATABASE_OWNER_URL: 'postgres://platform_owner:owner-93d2ae@db.internal:5432/platform',
    ANALYTICS_DATABASE_URL: 'postgres://platform_app:app-6b1f0c@replica.internal:5432/platform',
    S3_ACCESS_KEY: 'prod-access-key',
    S3_SECRET_KEY: randomBytes(24).toString('base64'),
    BILLING_STRIPE_WEBHOOK_SECRET: `whsec_${randomBytes(16).toString('hex')}`,
    BILLING_PADDLE_WEBHOOK_SECRET: `pdl_${randomBytes(16).toString('hex')}`,
    MFA_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    PASSWORD_PEPPER: randomBytes(32).toString('base64'),
    JWT_PRIVATE_KEY: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    TEMPORAL_PAYLOAD_KEY: randomBytes(32).toString('base64'),
  };
}
