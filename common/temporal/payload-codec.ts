import { createCipheriv, createDecipheriv, createHash, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import { METADATA_ENCODING_KEY, ValueError, type Payload, type PayloadCodec } from '@temporalio/common';

/**
 * Encrypts every Temporal payload the platform writes (workflow and activity arguments and results,
 * signals, updates, memos) with AES-256-GCM before it leaves the process, so the server, its database
 * and its UI hold ciphertext only: the one-time tokens in e-mail links, addresses and tenant data are
 * never stored in clear in workflow histories.
 *
 * Format of an encrypted payload: metadata `encoding: binary/encrypted`, `encryption-cipher:
 * AES-256-GCM`, `encryption-key-id: <kid>`; data = 12-byte nonce | 16-byte tag | ciphertext of the
 * original payload serialized as: 4-byte big-endian length | JSON of its metadata (values base64) | its data.
 * The key id is also the associated data, so a payload cannot be passed off as sealed by another key.
 *
 * A payload without the encrypted encoding is passed through unchanged: histories written before the
 * codec existed (the committed replay histories among them) still decode.
 */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const METADATA_KEY_ID = 'encryption-key-id';
const METADATA_CIPHER = 'encryption-cipher';
const CIPHER = 'AES-256-GCM';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

const utf8 = (text: string): Uint8Array => Buffer.from(text, 'utf8');
const text = (bytes: Uint8Array | null | undefined): string => Buffer.from(bytes ?? []).toString('utf8');

/** A 32-byte AES key, named by a short id derived from it (the first 8 bytes of its SHA-256, in hex). */
export interface PayloadKey {
  id: string;
  key: Buffer;
  /**
   * The key as node:crypto holds it, made once: given the raw bytes, every cipher imports the key
   * again (about 15 µs of the 20 a small payload's encryption costs here), and every workflow task
   * seals or opens several payloads in the gateway and the worker.
   */
  secret: KeyObject;
}

export function payloadKey(key: Buffer): PayloadKey {
  if (key.length !== 32) throw new ValueError(`A payload key is 32 bytes; this one is ${key.length}`);
  return { id: createHash('sha256').update(key).digest('hex').slice(0, 16), key, secret: createSecretKey(key) };
}

function serialize(payload: Payload): Buffer {
  const metadata = Object.fromEntries(Object.entries(payload.metadata ?? {})
    .map(([name, value]) => [name, Buffer.from(value ?? []).toString('base64')]));
  const head = Buffer.from(JSON.stringify(metadata), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32BE(head.length);
  return Buffer.concat([length, head, Buffer.from(payload.data ?? [])]);
}

function deserialize(plain: Buffer): Payload {
  const headLength = plain.readUInt32BE(0);
  const metadata = JSON.parse(plain.subarray(4, 4 + headLength).toString('utf8')) as Record<string, string>;
  return {
    metadata: Object.fromEntries(Object.entries(metadata).map(([name, value]) => [name, new Uint8Array(Buffer.from(value, 'base64'))])),
    data: new Uint8Array(plain.subarray(4 + headLength)),
  };
}

export class EncryptionCodec implements PayloadCodec {
  private readonly byId: ReadonlyMap<string, KeyObject>;

  /** `keys[0]` encrypts; every key decrypts what was sealed with it (rotation: put the new key first). */
  constructor(private readonly keys: readonly PayloadKey[]) {
    if (keys.length === 0) throw new ValueError('The payload codec needs at least one key');
    this.byId = new Map(keys.map(({ id, secret }) => [id, secret]));
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- async so a failure reaches Temporal as a rejection
  async encode(payloads: Payload[]): Promise<Payload[]> {
    const { id, secret } = this.keys[0];
    return payloads.map((payload) => {
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv('aes-256-gcm', secret, nonce).setAAD(utf8(id));
      const sealed = Buffer.concat([cipher.update(serialize(payload)), cipher.final()]);
      return {
        metadata: { [METADATA_ENCODING_KEY]: utf8(ENCRYPTED_ENCODING), [METADATA_CIPHER]: utf8(CIPHER), [METADATA_KEY_ID]: utf8(id) },
        data: new Uint8Array(Buffer.concat([nonce, cipher.getAuthTag(), sealed])),
      };
    });
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- async so a ValueError reaches Temporal as a rejection
  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (text(payload.metadata?.[METADATA_ENCODING_KEY]) !== ENCRYPTED_ENCODING) return payload;
      const id = text(payload.metadata?.[METADATA_KEY_ID]);
      const key = this.byId.get(id);
      if (!key) throw new ValueError(`No payload key with id ${id || '(none)'} is configured; was it removed too early?`);
      const data = Buffer.from(payload.data ?? []);
      if (data.length < NONCE_BYTES + TAG_BYTES) throw new ValueError('An encrypted payload is too short');
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, NONCE_BYTES)).setAAD(utf8(id));
        decipher.setAuthTag(data.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES));
        return deserialize(Buffer.concat([decipher.update(data.subarray(NONCE_BYTES + TAG_BYTES)), decipher.final()]));
      } catch (cause) {
        throw new ValueError(`An encrypted payload (key ${id}) failed authentication: it was altered or sealed with another key`, cause);
      }
    });
  }
}
