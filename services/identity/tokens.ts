import { errors as joseErrors, jwtVerify, SignJWT, type JWTHeaderParameters, type JWTPayload } from 'jose';
import type { Config } from '../../common/config';
import { isUuid } from '../../common/ids';
import { problems } from '../../common/problems';
import { JWT_ALG, type SigningKeys } from './signing-keys';

/**
 * The claims of docs/reference/identity.md#rule-11 (permissions are never in the token), plus `sid`: the session the token
 * belongs to (its refresh-token family), so a gateway can refuse the token once that session ended
 * (api/runtime/session-revocations.ts; docs/decisions/identity.md, Instant revocation and sessions),
 * and `authTime` (the OpenID Connect claim `auth_time`): when the sign-in behind the session proved a
 * credential, in seconds since the epoch, which routes of high-value actions require to be recent
 * (docs/decisions/identity.md, Step-up for high-value actions).
 */
export interface AccessClaims {
  sub: string;
  email: string;
  tenantId: string;
  roles: string[];
  sid: string;
  authTime: number;
  /**
   * Whether the account (`sub`) had two-factor on when the token was issued: under REQUIRE_MFA_FOR_ADMINS a
   * member holding management permissions without it may only enrol (docs/reference/identity.md#rule-48).
   * Read at every issue from the row the flow already reads, so the gateway needs no query per request.
   */
  mfa: boolean;
}

export interface VerifiedAccess extends Omit<AccessClaims, 'authTime' | 'mfa'> {
  /** Absent from tokens signed before the claim existed: such a token is never recent enough for a step-up. */
  authTime?: number;
  /** Absent from tokens signed before the claim existed: such a token counts as without two-factor. */
  mfa?: boolean;
  iat: number;
  exp: number;
  /** Only on impersonation tokens: the Platform Owner behind them (the RFC 8693 `act` claim). */
  impersonatorId?: string;
}

/**
 * The claims an access token may carry: those of docs/reference/identity.md#rule-11, `sid` (the session, required: a token that
 * names no session could not be revoked with it, so one is refused), `auth_time` and `mfa` (optional, so the
 * tokens of the previous release stay valid for their 15 minutes), and `act` (RFC 8693, "actor")
 * on impersonation tokens only. A token with any other claim is refused, so nothing outside this
 * list can ever be read from a token by accident.
 */
const ACCESS_CLAIMS = new Set(['sub', 'email', 'tenantId', 'roles', 'sid', 'auth_time', 'mfa', 'iat', 'exp', 'iss', 'aud', 'act']);

/** The payload of an access token: `authTime` under its registered name, `auth_time`. */
function accessPayload({ authTime, ...claims }: AccessClaims): Omit<AccessClaims, 'authTime'> & { auth_time: number } {
  return { ...claims, auth_time: authTime };
}

/** `act` is exactly `{sub: <uuid>}`: one actor, no nested delegation chain. */
function impersonatorOf(act: unknown): string | null {
  if (typeof act !== 'object' || act === null || Array.isArray(act)) return null;
  const { sub, ...rest } = act as Record<string, unknown>;
  return typeof sub === 'string' && isUuid(sub) && Object.keys(rest).length === 0 ? sub : null;
}

/**
 * The JOSE `typ` header tells the two kinds of token apart (RFC 9068 names access tokens
 * `at+jwt`), so a tenant-selection token can never be presented as an access token.
 */
const ACCESS_TYP = 'at+jwt';
const SELECTION_TYP = 'tenant-selection+jwt';
const MFA_CHALLENGE_TYP = 'mfa-challenge+jwt';

/** How a sign-in was proved, as the auth.user.logged_in event reports it. */
export type LoginMethod = { method: 'password' } | { method: 'oidc'; provider: string };

/** What a token of an unfinished sign-in says: who, and how the first factor was proved. */
export interface PendingLogin {
  userId: string;
  how: LoginMethod;
}

const PROVIDER_ID = /^[a-z0-9][a-z0-9_-]{0,39}$/;

/** The `login` claim of a pending-login token: `password` or `oidc:<provider>`. */
const loginClaim = (how: LoginMethod): string => (how.method === 'oidc' ? `oidc:${how.provider}` : 'password');

function loginMethodOf(claim: unknown): LoginMethod | null {
  // A selection token from before the claim existed was always a password login.
  if (claim === undefined || claim === 'password') return { method: 'password' };
  if (typeof claim !== 'string' || !claim.startsWith('oidc:') || !PROVIDER_ID.test(claim.slice(5))) return null;
  return { method: 'oidc', provider: claim.slice(5) };
}

export interface SignedToken {
  token: string;
  expiresAt: Date;
}

type JwtSettings = Config['identity']['jwt'];

/**
 * Signs and verifies the platform's JWTs: ES256 only, with the configured issuer and audience, the
 * key chosen by `kid`. Verification needs no database or network, so the gateway does it on every
 * request for the price of one ECDSA verification.
 */
export class TokenService {
  constructor(
    private readonly keys: SigningKeys,
    private readonly jwt: JwtSettings,
    private readonly ttl: Pick<Config['identity']['ttl'], 'accessToken' | 'sessionToken'>,
  ) {}

  get jwks(): SigningKeys['jwks'] {
    return this.keys.jwks;
  }

  issueAccessToken(claims: AccessClaims, now = new Date()): Promise<SignedToken> {
    const { sub, ...rest } = accessPayload(claims);
    return this.sign(rest, sub, ACCESS_TYP, this.ttl.accessToken, now);
  }

  /**
   * An access token for the Platform Owner acting as a user of a tenant: the user's own claims plus
   * `act: {sub: impersonatorId}`, expiring at the end of the impersonation (one hour from its start;
   * a rotation within it issues tokens that end at the same moment).
   */
  async issueImpersonationToken(claims: AccessClaims, impersonatorId: string, endsAt: Date, now = new Date()): Promise<SignedToken> {
    const { sub, ...rest } = accessPayload(claims);
    // exp = iat + ttl lands exactly on the (whole) second the impersonation ends.
    const ttlSeconds = Math.floor(endsAt.getTime() / 1000) - Math.floor(now.getTime() / 1000);
    if (ttlSeconds <= 0) throw problems.unauthorized('The impersonation has ended');
    return this.sign({ ...rest, act: { sub: impersonatorId } }, sub, ACCESS_TYP, ttlSeconds, now);
  }

  async verifyAccessToken(token: string): Promise<VerifiedAccess> {
    const payload = await this.verify(token, ACCESS_TYP);
    const { sub, email, tenantId, roles, sid, auth_time: authTime, mfa, iat, exp, act } = payload;
    const impersonatorId = act === undefined ? undefined : impersonatorOf(act);
    const valid = typeof sub === 'string' && isUuid(sub) && typeof email === 'string' && typeof tenantId === 'string'
      && isUuid(tenantId) && Array.isArray(roles) && roles.every((role) => typeof role === 'string')
      && typeof sid === 'string' && isUuid(sid) && typeof iat === 'number' && typeof exp === 'number' && impersonatorId !== null
      && (authTime === undefined || Number.isInteger(authTime)) && (mfa === undefined || typeof mfa === 'boolean')
      && Object.keys(payload).every((claim) => ACCESS_CLAIMS.has(claim));
    if (!valid) throw problems.unauthorized('The access token is not valid');
    return {
      sub, email, tenantId, roles: roles, sid, iat, exp,
      ...(typeof authTime === 'number' ? { authTime } : {}), ...(typeof mfa === 'boolean' ? { mfa } : {}), ...(impersonatorId ? { impersonatorId } : {}),
    };
  }

  /**
   * The 5-minute token of a login that must still choose its tenant: the user, and how the login was
   * proved, so the session it opens reports the real method.
   */
  issueSelectionToken(userId: string, how: LoginMethod = { method: 'password' }, now = new Date()): Promise<SignedToken> {
    return this.sign({ login: loginClaim(how) }, userId, SELECTION_TYP, this.ttl.sessionToken, now);
  }

  /** `authenticatedAt`: the token's `iat`, when the credential was proved, which the session's `auth_time` keeps. */
  async verifySelectionToken(token: string): Promise<PendingLogin & { authenticatedAt: number }> {
    const invalid = 'The session token is not valid';
    const { userId, how, payload } = await this.verifyPending(token, SELECTION_TYP, invalid);
    if (typeof payload.iat !== 'number') throw problems.unauthorized(invalid);
    return { userId, how, authenticatedAt: payload.iat };
  }

  /**
   * The 5-minute token of a sign-in whose first factor was proved elsewhere (an external provider)
   * and that still needs the account's second factor (POST /auth/mfa/challenge).
   */
  issueMfaChallengeToken(user: { id: string; email: string }, how: LoginMethod, now = new Date()): Promise<SignedToken> {
    return this.sign({ login: loginClaim(how), email: user.email }, user.id, MFA_CHALLENGE_TYP, this.ttl.sessionToken, now);
  }

  /** The challenge names the address too: the login throttle counts by it, and the account is found by it. */
  async verifyMfaChallengeToken(token: string): Promise<PendingLogin & { email: string }> {
    const invalid = 'The two-factor challenge token is not valid';
    const { userId, how, payload } = await this.verifyPending(token, MFA_CHALLENGE_TYP, invalid);
    if (typeof payload.email !== 'string') throw problems.unauthorized(invalid);
    return { userId, how, email: payload.email };
  }

  private async verifyPending(token: string, typ: string, invalid: string): Promise<PendingLogin & { payload: JWTPayload }> {
    const payload = await this.verify(token, typ);
    const how = loginMethodOf(payload.login);
    if (typeof payload.sub !== 'string' || !isUuid(payload.sub) || !how) throw problems.unauthorized(invalid);
    return { userId: payload.sub, how, payload };
  }

  private async sign(claims: JWTPayload, subject: string, typ: string, ttlSeconds: number, now: Date): Promise<SignedToken> {
    const iat = Math.floor(now.getTime() / 1000);
    const exp = iat + ttlSeconds;
    const token = await new SignJWT(claims)
      .setProtectedHeader({ alg: JWT_ALG, kid: this.keys.signing.kid, typ })
      .setSubject(subject)
      .setIssuer(this.jwt.issuer)
      .setAudience(this.jwt.audience)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(this.keys.signing.key);
    return { token, expiresAt: new Date(exp * 1000) };
  }

  /**
   * ES256 is the only algorithm accepted: an RSA, HMAC or `alg: none` token fails before any key is
   * looked at. jose checks the signature before the expiry, so only a genuine token is told it expired.
   */
  private async verify(token: string, typ: string): Promise<JWTPayload> {
    try {
      const { payload } = await jwtVerify(token, (header: JWTHeaderParameters) => this.keyFor(header), {
        algorithms: [JWT_ALG],
        issuer: this.jwt.issuer,
        audience: this.jwt.audience,
        typ,
      });
      return payload;
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) throw problems.tokenExpired('The token has expired');
      throw problems.unauthorized('The token is not valid');
    }
  }

  private keyFor(header: JWTHeaderParameters) {
    const key = header.kid ? this.keys.verification.get(header.kid) : undefined;
    if (!key) throw new joseErrors.JWKSNoMatchingKey();
    return key;
  }
}
