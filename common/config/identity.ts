import { join } from 'node:path';
import Joi from 'joi';
import { parseAuthProviders, type AuthProviderSettings } from './auth-providers';
import { platformData } from './runtime';
import { optional, setting, thirtyTwoBytes } from './setting';

/** The public development key of MFA_ENCRYPTION_KEY (also in .env.example); production refuses it (common/config/production.ts). */
const DEV_MFA_ENCRYPTION_KEY = 'ZGV2LW9ubHktbWZhLWtleS1uZXZlci1pbi1wcm9kLTE=';
/** The public development key of PASSWORD_PEPPER (also in .env.example); production refuses it (common/config/production.ts). */
const DEV_PASSWORD_PEPPER = 'ZGV2LW9ubHktcGFzc3dvcmQtcGVwcGVyLW5ldmVyLTE=';

/** A count or a duration in seconds: a positive integer. */
const positive = (fallback: number) => Joi.number().integer().min(1).default(fallback);

/** Identity and sessions (docs/reference/identity.md): signing keys, token lifetimes, throttles, external sign-in, MFA, recovery. */
export const identitySettings = {
  identity: {
    jwt: {
      issuer: setting('JWT_ISSUER', Joi.string().uri().default('http://127.0.0.1:8080')),
      audience: setting('JWT_AUDIENCE', Joi.string().default('platform-api')),
      /** The signing key as a PKCS#8 PEM or a private JWK (JSON); without it the key file is used. */
      privateKey: optional('JWT_PRIVATE_KEY', Joi.string()),
      /** Public JWKs (a JSON JWK set) of retired signing keys that still verify during a rotation. */
      previousPublicKeys: optional('JWT_PREVIOUS_PUBLIC_KEYS', Joi.string()),
      /** Default: $PLATFORM_DATA/jwt/signing-keys.json, generated once when missing. */
      keyFile: optional('JWT_KEY_FILE', Joi.string(), (file, lookup) => file ?? join(lookup(platformData), 'jwt', 'signing-keys.json')),
    },
    /** Lifetimes in seconds (docs/reference/identity.md#limits); the grace window may be fractional in tests. */
    ttl: {
      accessToken: setting('ACCESS_TOKEN_TTL_SECONDS', positive(900)),
      refreshToken: setting('REFRESH_TOKEN_TTL_SECONDS', positive(7 * 24 * 3600)),
      refreshGrace: setting('REFRESH_GRACE_SECONDS', Joi.number().min(0).max(300).default(10)),
      /** The absolute end of a session (a refresh-token family), counted from its sign-in (docs/reference/identity.md#rule-42). */
      refreshSessionMax: setting('REFRESH_SESSION_MAX_SECONDS', positive(12 * 3600)),
      sessionToken: setting('SESSION_TOKEN_TTL_SECONDS', positive(300)),
      impersonation: setting('IMPERSONATION_TOKEN_TTL_SECONDS', positive(3600)),
      /** How recent a sign-in must be for a high-value action (a route with stepUp; docs/reference/identity.md#rule-46). */
      stepUpMaxAge: setting('STEP_UP_MAX_AGE_SECONDS', positive(900)),
    },
    /** One-time tokens by purpose, in seconds (a set-password link of POST /users lives as long as an invite). */
    oneTimeTokenTtl: {
      verifyEmail: setting('VERIFY_EMAIL_TOKEN_TTL_SECONDS', positive(24 * 3600)),
      resetPassword: setting('RESET_PASSWORD_TOKEN_TTL_SECONDS', positive(3600)),
      invite: setting('INVITE_TOKEN_TTL_SECONDS', positive(72 * 3600)),
    },
    /** Verification e-mails a user may request within windowSeconds (docs/reference/identity.md#rule-24: 3 per hour). */
    verifyEmailRequests: {
      limit: setting('VERIFY_EMAIL_REQUEST_LIMIT', positive(3)),
      windowSeconds: setting('VERIFY_EMAIL_REQUEST_WINDOW_SECONDS', positive(3600)),
    },
    /**
     * Failed logins counted per account and per IP within windowSeconds; past the free attempts each
     * further one doubles a wait (at most maxDelaySeconds) that ends with the window.
     */
    loginThrottle: {
      windowSeconds: setting('LOGIN_THROTTLE_WINDOW_SECONDS', positive(900)),
      accountAttempts: setting('LOGIN_THROTTLE_ACCOUNT_ATTEMPTS', positive(10)),
      ipAttempts: setting('LOGIN_THROTTLE_IP_ATTEMPTS', positive(50)),
      maxDelaySeconds: setting('LOGIN_THROTTLE_MAX_DELAY_SECONDS', positive(900)),
    },
    /**
     * External sign-in: the configured providers; how long a started sign-in (state, PKCE verifier,
     * nonce) may take; the deadline of each call to a provider; how long a discovery document is reused.
     */
    providers: {
      list: setting('AUTH_PROVIDERS', Joi.string<AuthProviderSettings[]>().empty('').custom(parseAuthProviders).default([])),
      stateTtlSeconds: setting('AUTH_PROVIDER_STATE_TTL_SECONDS', Joi.number().integer().min(30).max(3600).default(600)),
      httpTimeoutMs: setting('AUTH_PROVIDER_HTTP_TIMEOUT_MS', Joi.number().integer().min(100).max(60_000).default(5000)),
      discoveryTtlSeconds: setting('AUTH_PROVIDER_DISCOVERY_TTL_SECONDS', Joi.number().integer().min(0).max(86_400).default(3600)),
    },
    /**
     * encryptionKey: base64 of 32 bytes, sealing TOTP secrets (AES-256-GCM) and keying recovery-code
     * hashes; the development default is public, so production must set its own (common/config/production.ts). issuer: the name
     * authenticator apps show.
     */
    /**
     * base64 of 32 bytes from which the pepper of password hashes (argon2's secret) is derived
     * (services/identity/passwords.ts); the development default is public, so production must set its own
     * (common/config/production.ts).
     */
    passwordPepper: setting('PASSWORD_PEPPER', Joi.string().base64().custom(thirtyTwoBytes).default(DEV_PASSWORD_PEPPER)),
    /**
     * Members holding a management permission (MANAGEMENT_PERMISSIONS, services/access/permissions.ts) without
     * two-factor may only enrol it (docs/reference/identity.md#rule-48). Off by default, so existing tenants and
     * tests keep signing in as before; a real deployment turns it on (docs/operations.md).
     */
    requireMfaForAdmins: setting('REQUIRE_MFA_FOR_ADMINS', Joi.boolean().default(false)),
    mfa: {
      encryptionKey: setting('MFA_ENCRYPTION_KEY', Joi.string().base64().custom(thirtyTwoBytes).default(DEV_MFA_ENCRYPTION_KEY)),
      issuer: setting('MFA_ISSUER', Joi.string().max(100).default('Platform')),
    },
    /**
     * /auth/recovery: maxAttempts failures within windowSeconds lock recovery for lockSeconds (owner
     * alerted); accountLockFailures failures since the last success lock the account.
     */
    recovery: {
      maxAttempts: setting('RECOVERY_MAX_ATTEMPTS', positive(5)),
      windowSeconds: setting('RECOVERY_WINDOW_SECONDS', positive(900)),
      lockSeconds: setting('RECOVERY_LOCK_SECONDS', positive(3600)),
      accountLockFailures: setting('RECOVERY_ACCOUNT_LOCK_FAILURES', positive(15)),
    },
  },
};
