import { randomBytes } from 'node:crypto';
import type { DataConverter } from '@temporalio/common';
import type { Config } from '../config';
import { readOrCreateKeyFile } from '../key-file';
import { EncryptionCodec, payloadKey, type PayloadKey } from './payload-codec';

export class PayloadKeyError extends Error {}

const decodeKey = (base64: string, where: string): PayloadKey => {
  try {
    return payloadKey(Buffer.from(base64, 'base64'));
  } catch (error) {
    throw new PayloadKeyError(`${where}: ${(error as Error).message}`);
  }
};

/**
 * The payload keys, encrypting one first: TEMPORAL_PAYLOAD_KEY, else the key file (a JSON
 * `{"keys": [base64, ...]}`, newest first, generated once into the data folder like the JWT signing
 * key), then TEMPORAL_PAYLOAD_PREVIOUS_KEYS. Rotation: put a new key first (in the file or the
 * variable) and keep the old one among the decrypting keys while histories sealed with it are kept.
 */
export async function loadPayloadKeys(cfg: Config['temporalCodec']): Promise<PayloadKey[]> {
  let current: PayloadKey[];
  if (cfg.key) {
    current = [decodeKey(cfg.key, 'TEMPORAL_PAYLOAD_KEY')];
  } else {
    const text = await readOrCreateKeyFile(cfg.keyFile, () => JSON.stringify({ keys: [randomBytes(32).toString('base64')] }, null, 2));
    const { keys } = JSON.parse(text) as { keys?: unknown };
    if (!Array.isArray(keys) || keys.length === 0 || !keys.every((key) => typeof key === 'string')) {
      throw new PayloadKeyError(`${cfg.keyFile}: expected {"keys": [base64, ...]} with at least one key`);
    }
    current = keys.map((key: string, index) => decodeKey(key, `${cfg.keyFile} key ${index}`));
  }
  const previous = cfg.previousKeys.map((key, index) => decodeKey(key, `TEMPORAL_PAYLOAD_PREVIOUS_KEYS ${index}`));
  const byId = new Map<string, PayloadKey>();
  for (const key of [...current, ...previous]) if (!byId.has(key.id)) byId.set(key.id, key);
  return [...byId.values()];
}

/**
 * The data converter of every Temporal client and worker of the platform: the default payload
 * converter (JSON, runs in the workflow sandbox) and the encrypting codec (runs outside it).
 */
export async function platformDataConverter(cfg: Config['temporalCodec']): Promise<DataConverter> {
  return { payloadCodecs: [new EncryptionCodec(await loadPayloadKeys(cfg))] };
}
