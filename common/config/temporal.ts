import { homedir } from 'node:os';
import { join } from 'node:path';
import Joi from 'joi';
import { platformData } from './runtime';
import { optional, setting, thirtyTwoBytes } from './setting';

/** The Temporal server, the payload codec every Temporal client and worker uses, and the workers' metrics. */
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
  /**
   * The Temporal SDK's own metrics of a worker process (task slots, schedule-to-start latencies, the
   * sticky cache), served for Prometheus on 127.0.0.1:<port>/metrics by the SDK's core. One port per
   * process: two workers on one machine each need their own (the cluster profile passes one per
   * replica). 0 or empty turns the endpoint off.
   */
  workerMetrics: {
    port: setting('WORKER_METRICS_PORT', Joi.alternatives(Joi.number().integer().min(0).max(65535), Joi.string().valid('')).default(9464),
      (port: number | string) => (port === '' || port === 0 ? undefined : Number(port))),
  },
};
