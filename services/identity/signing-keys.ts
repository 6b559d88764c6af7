import {
  calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, importPKCS8, type CryptoKey, type JWK,
} from 'jose';
import type { Config } from '../../common/config';
import { readOrCreateKeyFile } from '../../common/key-file';

export const JWT_ALG = 'ES256';

/** The public half of a key as JWKS publishes it. */
export interface PublicJwk extends JWK {
  kid: string;
  alg: typeof JWT_ALG;
  use: 'sig';
}

export interface SigningKeys {
  /** The key every new token is signed with. */
  signing: { kid: string; key: CryptoKey };
  /** Every key a token may be signed with: the signing key and the retired ones, by kid. */
  verification: ReadonlyMap<string, CryptoKey>;
  /** GET /.well-known/jwks.json. */
  jwks: { keys: PublicJwk[] };
}

export class SigningKeyError extends Error {}

/** Only ECDSA P-256 keys are accepted anywhere, so no other algorithm can be configured by mistake. */
function assertP256(jwk: JWK, where: string): void {
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256') throw new SigningKeyError(`${where}: only EC P-256 (ES256) keys are accepted`);
}

function publicPart(jwk: JWK): JWK {
  const { kty, crv, x, y } = jwk;
  return { kty, crv, x, y };
}

/** The kid is the RFC 7638 thumbprint of the public key: stable, and never stored separately. */
async function describe(jwk: JWK, where: string): Promise<{ kid: string; publicJwk: PublicJwk }> {
  assertP256(jwk, where);
  const kid = jwk.kid ?? await calculateJwkThumbprint(publicPart(jwk));
  return { kid, publicJwk: { ...publicPart(jwk), kid, alg: JWT_ALG, use: 'sig' } };
}

async function newPrivateJwk(): Promise<JWK> {
  const { privateKey } = await generateKeyPair(JWT_ALG, { extractable: true });
  return exportJWK(privateKey);
}

/** The key file: a JWK set of private keys, the first one signing, created once (key-file.ts). */
async function readOrCreateSigningKeyFile(path: string): Promise<JWK[]> {
  try {
    const text = await readOrCreateKeyFile(path, async () => JSON.stringify({ keys: [await newPrivateJwk()] }, null, 2));
    return (JSON.parse(text) as { keys: JWK[] }).keys;
  } catch (error) {
    throw new SigningKeyError(`${path}: ${(error as Error).message}`);
  }
}

/** JWT_PRIVATE_KEY: a PKCS#8 PEM or a private JWK. */
async function configuredPrivateJwk(value: string): Promise<JWK> {
  if (value.trimStart().startsWith('{')) return JSON.parse(value) as JWK;
  const key = await importPKCS8(value.replace(/\\n/g, '\n'), JWT_ALG, { extractable: true });
  return exportJWK(key);
}

/**
 * The signing key (configuration first, else the key file) and every key that still verifies:
 * the other keys of the key file and JWT_PREVIOUS_PUBLIC_KEYS. Rotation: put the new key first
 * (file) or in JWT_PRIVATE_KEY and move the old public key to the previous keys; tokens signed
 * with it verify until they expire, then it can go.
 */
export async function loadSigningKeys(cfg: Config['identity']['jwt']): Promise<SigningKeys> {
  const privateJwks = cfg.privateKey ? [await configuredPrivateJwk(cfg.privateKey)] : await readOrCreateSigningKeyFile(cfg.keyFile);
  const previous = cfg.previousPublicKeys ? (JSON.parse(cfg.previousPublicKeys) as { keys: JWK[] }).keys : [];
  if (privateJwks.length === 0) throw new SigningKeyError(`${cfg.keyFile}: the key set is empty`);

  const verification = new Map<string, CryptoKey>();
  const jwks: PublicJwk[] = [];
  for (const [index, jwk] of [...privateJwks, ...previous].entries()) {
    const { kid, publicJwk } = await describe(jwk, `key ${index}`);
    if (verification.has(kid)) continue;
    verification.set(kid, await importJWK(publicJwk, JWT_ALG) as CryptoKey);
    jwks.push(publicJwk);
  }
  const { kid } = await describe(privateJwks[0], 'signing key');
  const key = await importJWK({ ...privateJwks[0], alg: JWT_ALG }, JWT_ALG) as CryptoKey;
  return { signing: { kid, key }, verification, jwks: { keys: jwks } };
}
