import { homedir } from 'node:os';
import { join } from 'node:path';
import Joi from 'joi';
import { platformData } from './runtime';
import { optional, setting, thirtyTwoBytes } from './setting';

/** The Temporal server, and the payload codec every Temporal client and worker uses. */
export const temporalSettings = {
  temporal: {
    address: setting('TEMPORAL_ADDRESS', Joi.string().default('127.0.0.1:7233')),
    namespace: setting('TEMPORAL_NAMESPACE', Joi.string().default('default')),
    uiUrl: setting('TEMPORAL_UI_URL', Joi.string().uri().default('http://127.0.0.1:8233')),
    /** The time-skipping test server the workflow tests start (a wrapper the bring-up scripts build). */
    testServerPath: setting('TEMPORAL_TEST_SERVER_PATH', Joi.string().default(join(homedir(), '.cache/platform/bin/temporal-test-server'))),
  },
  /**
   * The payload codec of every Temporal client and worker: key encrypts (base64 of 32 bytes; else the
   * first key of keyFile, generated once); previousKeys only decrypt (rotation).
   */
  temporalCodec: {
    /** Encrypts every Temporal payload (AES-256-GCM). Without it the key file is used. */
    key: optional('TEMPORAL_PAYLOAD_KEY', Joi.string().base64().custom(thirtyTwoBytes)),
    /** Comma-separated base64 keys that still decrypt payloads sealed before a rotation. */
    previousKeys: optional('TEMPORAL_PAYLOAD_PREVIOUS_KEYS', Joi.string().pattern(/^[A-Za-z0-9+/=]+(,[A-Za-z0-9+/=]+)*$/),
      (keys) => keys?.split(',') ?? []),
    /** Default: $PLATFORM_DATA/temporal/payload-keys.json, generated once when missing. */
    keyFile: optional('TEMPORAL_PAYLOAD_KEY_FILE', Joi.string(),
      (file, lookup) => file ?? join(lookup(platformData), 'temporal', 'payload-keys.json')),
  },
};
