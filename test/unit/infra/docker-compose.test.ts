import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { repoRoot } from '../../../common/paths';
import { loadConfig } from '../../../common/config';
import { imageCommand, nativeGatewayCommand } from '../../helpers/gateway-command';

// docker-compose.yml cannot run here (no Docker engine), so this keeps it in step with what does
// run: the native scripts and the configuration defaults in .env.example.
interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  ports?: string[];
  environment?: Record<string, string>;
  env_file?: string;
  volumes?: string[];
}

const compose = parse(readFileSync(join(repoRoot, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
};
const envExample = Object.fromEntries(
  readFileSync(join(repoRoot, '.env.example'), 'utf8').split('\n')
    .filter((line) => /^[A-Z0-9_]+=/.test(line))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
);
const defaults = loadConfig(envExample);

const hostPorts = (service: string): number[] =>
  (compose.services[service]?.ports ?? []).map((mapping) => Number(mapping.split(':').at(-2)));

describe('docker-compose.yml', () => {
  it('describes every server and process of the native bring-up', () => {
    expect(Object.keys(compose.services)).toEqual(expect.arrayContaining([
      'postgres', 'redis', 'temporal', 'temporal-ui', 'kafka', 's3', 'clamav', 'mailpit', 'api', 'worker', 'relay',
    ]));
  });

  it('publishes each server on the port the configuration defaults to', () => {
    expect(hostPorts('postgres')).toContain(Number(new URL(defaults.db.url).port));
    expect(hostPorts('redis')).toContain(Number(new URL(defaults.redis.url).port));
    expect(hostPorts('temporal')).toContain(Number(defaults.temporal.address.split(':')[1]));
    expect(hostPorts('temporal-ui')).toContain(Number(new URL(defaults.temporal.uiUrl).port));
    expect(hostPorts('kafka')).toContain(Number(defaults.kafka.brokers[0].split(':')[1]));
    expect(hostPorts('s3')).toContain(defaults.s3.port);
    expect(hostPorts('clamav')).toContain(defaults.clamav.port);
    expect(hostPorts('mailpit')).toEqual(expect.arrayContaining([defaults.mail.smtpPort, Number(new URL(defaults.mail.mailpitApiUrl).port)]));
    expect(hostPorts('api')).toEqual(expect.arrayContaining([defaults.api.port, defaults.api.grpcPort]));
  });

  it('builds the application services from the Dockerfile and runs their compiled entry points', () => {
    const dockerfile = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8');
    // patch-package runs in npm's postinstall: the dependency fixes must be in the image before the install.
    expect(dockerfile).toContain('COPY patches/ ./patches/');
    expect(dockerfile.indexOf('COPY patches/')).toBeLessThan(dockerfile.indexOf('RUN npm install'));
    const entry = (service: string) => compose.services[service].command?.join(' ');
    // The gateway runs the image's command, the one the native bring-up runs (flags and malloc tunables alike).
    expect(entry('api')).toBeUndefined();
    expect(imageCommand(dockerfile)).toEqual(nativeGatewayCommand());
    expect(entry('worker')).toContain('dist/workers/main.js');
    expect(entry('relay')).toContain('dist/workers/outbox-relay.js');
    for (const service of ['api', 'worker', 'relay']) {
      expect(compose.services[service].build).toBeDefined();
      expect(existsSync(join(repoRoot, compose.services[service].env_file ?? ''))).toBe(true);
    }
  });

  it('gives the application only settings that the configuration knows, with valid values', () => {
    const appEnv = compose.services.api.environment ?? {};
    for (const name of Object.keys(appEnv)) expect(Object.keys(envExample)).toContain(name);
    expect(() => loadConfig({ ...envExample, ...appEnv })).not.toThrow();
  });

  it('sends the store object-created notifications to Kafka, keeps its connections alive and runs the Temporal priority matcher, as the native scripts do', () => {
    const s3Command = compose.services.s3.command ?? [];
    const flag = (name: string) => s3Command[s3Command.indexOf(name) + 1];
    expect(flag('--event-kafka-topic')).toBe(defaults.files.storeEventsTopic);
    expect(readFileSync(join(repoRoot, 'scripts/infra/services/s3.sh'), 'utf8')).toContain('--keep-alive');
    expect(compose.services.s3.environment?.VGW_KEEP_ALIVE).toBe('true');
    const filterMount = compose.services.s3.volumes?.find((v) => v.endsWith(`:${flag('--event-filter')}:ro`)) ?? '';
    expect(JSON.parse(readFileSync(join(repoRoot, filterMount.split(':')[0]), 'utf8'))).toEqual({ 's3:ObjectCreated:Put': true });

    const nativeTemporal = readFileSync(join(repoRoot, 'scripts/infra/services/temporal.sh'), 'utf8');
    expect(nativeTemporal).toContain('matching.useNewMatcher=true');
    const dynamicConfig = compose.services.temporal.environment?.DYNAMIC_CONFIG_FILE_PATH ?? '';
    const configMount = compose.services.temporal.volumes?.find((v) => v.endsWith(`:${dynamicConfig}:ro`)) ?? '';
    const settings = parse(readFileSync(join(repoRoot, configMount.split(':')[0]), 'utf8')) as Record<string, Array<{ value: unknown }>>;
    expect(settings['matching.useNewMatcher']).toEqual([{ value: true }]);
    // Every dynamic setting of the dev server is the Temporal server's too (compose and the cluster profile).
    const devSettings = [...nativeTemporal.matchAll(/--dynamic-config-value ([\w.]+)=(\w+)/g)];
    expect(devSettings.length).toBeGreaterThanOrEqual(4);
    for (const [, key, value] of devSettings) expect(settings[key]).toEqual([{ value: value === 'true' ? true : Number(value) }]);
    expect(readFileSync(join(repoRoot, 'scripts/infra/services/temporal-server.sh'), 'utf8')).toContain(configMount.split(':')[0].replace(/^\.\//, ''));
  });

  it('uses the same credentials as the native servers', () => {
    const s3 = compose.services.s3.environment ?? {};
    expect([s3.ROOT_ACCESS_KEY, s3.ROOT_SECRET_KEY]).toEqual([defaults.s3.accessKey, defaults.s3.secretKey]);
    const init = compose.services.postgres.volumes?.find((v) => v.includes('init.sql')) ?? '';
    const initSql = readFileSync(join(repoRoot, init.split(':')[0]), 'utf8');
    for (const url of [defaults.db.url, defaults.db.ownerUrl]) {
      const { username, password } = new URL(url);
      expect(initSql).toContain(username);
      expect(initSql).toContain(`'${password}'`);
    }
  });
});
