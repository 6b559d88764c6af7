import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultPayloadConverter, ValueError, type Payload } from '@temporalio/common';
import { loadConfig } from '../../../common/config';
import { loadPayloadKeys, PayloadKeyError } from '../../../common/temporal/data-converter';
import { ENCRYPTED_ENCODING, EncryptionCodec, METADATA_KEY_ID, payloadKey } from '../../../common/temporal/payload-codec';

/** The encrypting payload codec of every Temporal client and worker (common/temporal/payload-codec.ts). */
const SECRET = 'token=Zm9vYmFyLXNlY3JldC10b2tlbi12YWx1ZS0xMjM0NTY3ODkw';
const message = { to: 'ada@example.test', template: 'verify-email', data: { link: `http://app/verify?${SECRET}` } };
const plain = (value: unknown): Payload => defaultPayloadConverter.toPayload(value);
const text = (bytes?: Uint8Array | null) => Buffer.from(bytes ?? []).toString('utf8');

const keyA = payloadKey(randomBytes(32));
const keyB = payloadKey(randomBytes(32));

describe('EncryptionCodec', () => {
  const codec = new EncryptionCodec([keyA]);

  it('round-trips payloads of every kind, metadata included', async () => {
    const payloads = [plain(message), plain(null), plain(undefined), plain(new Uint8Array([0, 1, 255])), plain('')];
    const encoded = await codec.encode(payloads);
    const decoded = await codec.decode(encoded);
    expect(decoded.map((p) => defaultPayloadConverter.fromPayload(p))).toEqual([message, null, undefined, new Uint8Array([0, 1, 255]), '']);
    expect(decoded.map((p) => text(p.metadata?.encoding))).toEqual(payloads.map((p) => text(p.metadata?.encoding)));
  });

  it('leaves nothing of the value or its encoding in clear, names the key, and never repeats a ciphertext', async () => {
    const [first, second] = await codec.encode([plain(message), plain(message)]);
    for (const sealed of [first, second]) {
      expect(text(sealed.metadata?.encoding)).toBe(ENCRYPTED_ENCODING);
      expect(text(sealed.metadata?.[METADATA_KEY_ID])).toBe(keyA.id);
      expect(Buffer.from(sealed.data!).toString('latin1')).not.toContain('Zm9vYmFy');
      expect(Buffer.from(sealed.data!).toString('latin1')).not.toContain('json/plain');
    }
    expect(Buffer.from(first.data!).equals(Buffer.from(second.data!))).toBe(false);
  });

  it('refuses a payload whose ciphertext, nonce or tag was altered', async () => {
    const [sealed] = await codec.encode([plain(message)]);
    for (const index of [0, 12, 28, sealed.data!.length - 1]) {
      const data = new Uint8Array(sealed.data!);
      data[index] ^= 0x01;
      await expect(codec.decode([{ ...sealed, data }])).rejects.toThrow(/failed authentication/);
    }
    await expect(codec.decode([{ ...sealed, data: sealed.data!.subarray(0, 20) }])).rejects.toThrow(ValueError);
  });

  it('refuses a payload relabelled with another key id', async () => {
    const both = new EncryptionCodec([keyA, keyB]);
    const [sealed] = await both.encode([plain(message)]);
    const relabelled = { ...sealed, metadata: { ...sealed.metadata, [METADATA_KEY_ID]: Buffer.from(keyB.id) } };
    await expect(both.decode([relabelled])).rejects.toThrow(/failed authentication/);
  });

  it('passes payloads without the encrypted encoding through unchanged (histories from before the codec)', async () => {
    const payloads = [plain(message), plain(null), { metadata: {}, data: new Uint8Array([1, 2]) }];
    const decoded = await codec.decode(payloads);
    expect(decoded).toEqual(payloads);
    for (const [index, payload] of decoded.entries()) expect(payload).toBe(payloads[index]);
  });

  it('rotates: the first key encrypts, an older key still decrypts, a removed key is named in the error', async () => {
    const [old] = await new EncryptionCodec([keyB]).encode([plain(message)]);
    const rotated = new EncryptionCodec([keyA, keyB]);
    expect(defaultPayloadConverter.fromPayload((await rotated.decode([old]))[0])).toEqual(message);
    const [fresh] = await rotated.encode([plain(message)]);
    expect(text(fresh.metadata?.[METADATA_KEY_ID])).toBe(keyA.id);
    await expect(new EncryptionCodec([keyA]).decode([old])).rejects.toThrow(new RegExp(`No payload key with id ${keyB.id}`));
  });
});

describe('payload keys', () => {
  let dir: string;
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'payload-keys-')); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const cfgWith = (env: Record<string, string>) => loadConfig({ PLATFORM_DATA: dir, ...env }).temporalCodec;

  it('generates the key file once (owner-only) and reads the same key afterwards', async () => {
    const cfg = cfgWith({});
    expect(cfg.keyFile).toBe(join(dir, 'temporal', 'payload-keys.json'));
    const [first] = await loadPayloadKeys(cfg);
    const [again] = await loadPayloadKeys(cfg);
    expect(again.id).toBe(first.id);
    expect(JSON.parse(readFileSync(cfg.keyFile, 'utf8')).keys).toEqual([first.key.toString('base64')]);
    expect(statSync(cfg.keyFile).mode & 0o777).toBe(0o600);
  });

  it('prefers TEMPORAL_PAYLOAD_KEY and adds the previous keys for decryption only', async () => {
    const keys = await loadPayloadKeys(cfgWith({
      TEMPORAL_PAYLOAD_KEY: keyA.key.toString('base64'), TEMPORAL_PAYLOAD_PREVIOUS_KEYS: `${keyB.key.toString('base64')},${keyA.key.toString('base64')}`,
    }));
    expect(keys.map((key) => key.id)).toEqual([keyA.id, keyB.id]);
  });

  it('refuses a key that is not 32 bytes', async () => {
    expect(() => cfgWith({ TEMPORAL_PAYLOAD_KEY: Buffer.alloc(16).toString('base64') })).toThrow(/TEMPORAL_PAYLOAD_KEY/);
    await expect(loadPayloadKeys(cfgWith({ TEMPORAL_PAYLOAD_PREVIOUS_KEYS: Buffer.alloc(16).toString('base64') }))).rejects.toThrow(PayloadKeyError);
  });
});
