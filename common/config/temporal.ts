import { homedir } from 'node:os';
import { join } from 'node:path';
import Joi from 'joi';
import { platformData } from './runtime';
import { caFile, optional, privateKeyFile, setting, thirtyTwoBytes } from './setting';

/** The variables that turn TLS on for the Temporal connections (TEMPORAL_TLS_SERVER_NAME alone does not). */
const TLS_VARIABLES = ['TEMPORAL_TLS_CERT_FILE', 'TEMPORAL_TLS_CA_FILE', 'TEMPORAL_API_KEY'];

/** A server name checks a certificate only when TLS is on: refused otherwise, as it would check nothing. */
const serverName = () => Joi.string().hostname().custom((name: string, helpers) => {
  const siblings = (helpers.state.ancestors as Array<Record<string, unknown>>)[0] ?? {};
  return TLS_VARIABLES.some((variable) => siblings[variable] !== undefined && siblings[variable] !== '') ? name
    : helpers.message({ custom: `{{#label}} is only read with TLS (${TLS_VARIABLES.join(', ')})` });
});

/** The Temporal server, the payload codec every Temporal client and worker uses, and the workers' metrics. */
export const temporalSettings = {
  temporal: {
    address: setting('TEMPORAL_ADDRESS', Joi.string().default('127.0.0.1:7233')),
    namespace: setting('TEMPORAL_NAMESPACE', Joi.string().default('default')),
    uiUrl: setting('TEMPORAL_UI_URL', Joi.string().uri().default('http://127.0.0.1:8233')),
    /** The time-skipping test server the workflow tests start (a wrapper the bring-up scripts build). */
    testServerPath: setting('TEMPORAL_TEST_SERVER_PATH', Joi.string().default(join(homedir(), '.cache/platform/bin/temporal-test-server'))),
    /**
     * TLS of every Temporal connection, the gateway's client and the workers' native connections alike
     * (common/temporal/connection-options.ts). A client certificate (mTLS, a self-hosted server with
     * requireClientAuth or a Temporal Cloud namespace) and a CA file each turn TLS on; the server name
     * replaces the address's host in the certificate check. Without a CA file the server is checked
     * against the public CAs (Temporal Cloud's).
     */
    tls: {
      certFile: optional('TEMPORAL_TLS_CERT_FILE', caFile()),
      keyFile: optional('TEMPORAL_TLS_KEY_FILE', privateKeyFile('TEMPORAL_TLS_CERT_FILE')
        .when('TEMPORAL_TLS_CERT_FILE', { is: Joi.exist(), then: Joi.required(), otherwise: Joi.forbidden() })
        .messages({
          'any.required': '{{#label}} is required with TEMPORAL_TLS_CERT_FILE (the client certificate\'s private key)',
          'any.unknown': '{{#label}} is only read with TEMPORAL_TLS_CERT_FILE',
        })),
      caFile: optional('TEMPORAL_TLS_CA_FILE', caFile()),
      serverName: optional('TEMPORAL_TLS_SERVER_NAME', serverName()),
    },
    /**
     * Temporal Cloud's other way in: sent as `authorization: Bearer <key>` on every call, over TLS
     * (implied). A client certificate authenticates too: one of the two, so which one a namespace
     * accepted is never in doubt.
     */
    apiKey: optional('TEMPORAL_API_KEY', Joi.string()
      .when('TEMPORAL_TLS_CERT_FILE', { is: Joi.exist(), then: Joi.forbidden() })
      .messages({ 'any.unknown': '{{#label}} and TEMPORAL_TLS_CERT_FILE are two ways to authenticate: set one' })),
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
