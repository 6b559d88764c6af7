import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Joi from 'joi';
import { CONFIG_VARIABLES, ConfigError, loadConfig } from '../../../common/config';
import { compileSettings, setting } from '../../../common/config/setting';
import { repoRoot } from '../../../common/paths';

/** The configuration is declared once per domain (common/config/<domain>.ts) and composed in common/config/index.ts. */
describe('configuration', () => {
  it('.env.example describes exactly the variables the configuration reads', () => {
    const described = readFileSync(join(repoRoot, '.env.example'), 'utf8').split('\n')
      .map((line) => /^#? ?([A-Z0-9_]+)=/.exec(line)?.[1])
      .filter((name): name is string => name !== undefined);
    expect([...described].sort()).toEqual([...CONFIG_VARIABLES].sort());
  });

  it('is validated in full, each bad variable named on its own line', () => {
    expect(() => loadConfig({ API_PORT: 'x', BILLING_TRIAL_DAYS: '-1' }))
      .toThrow(new ConfigError('Invalid configuration:\n  API_PORT: "API_PORT" must be a number\n  BILLING_TRIAL_DAYS: "BILLING_TRIAL_DAYS" must be greater than or equal to 0'));
  });

  it('derives members from their variables and freezes the result', () => {
    const config = loadConfig({ KAFKA_BROKERS: 'a:1,b:2', BILLING_CACHE_TTL: '60', PLATFORM_DATA: '/data', APP_BASE_URL: 'https://app.example/' });
    expect(config.kafka.brokers).toEqual(['a:1', 'b:2']);
    expect(config.billingLimits.cacheTtlMs).toBe(60_000);
    expect(config.identity.jwt.keyFile).toBe('/data/jwt/signing-keys.json');
    expect(config.mail.linkBaseUrl).toBe('https://app.example');
    expect(Object.isFrozen(config.kafka.brokers)).toBe(true);
  });

  it.each<[string, string | undefined, number | undefined]>([
    ['by default', undefined, 9464],
    ['on the port given', '9470', 9470],
    ['off with 0', '0', undefined],
    ['off when empty', '', undefined],
  ])('serves the worker\'s metrics %s (WORKER_METRICS_PORT)', (_case, value, port) => {
    expect(loadConfig(value === undefined ? {} : { WORKER_METRICS_PORT: value }).workerMetrics.port).toBe(port);
  });

  it('refuses a worker metrics port that is no port', () => {
    expect(() => loadConfig({ WORKER_METRICS_PORT: '70000' })).toThrow(/WORKER_METRICS_PORT/);
  });

  it('refuses a variable declared twice', () => {
    const port = () => setting('API_PORT', Joi.number().port().default(8080));
    expect(() => compileSettings({ a: port(), b: { c: port() } })).toThrow('Configuration variables declared twice: API_PORT');
  });
});
