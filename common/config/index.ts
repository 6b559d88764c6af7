import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../paths';
import { accessSettings } from './access';
import { auditSettings } from './audit';
import { billingSettings } from './billing';
import { dataSettings } from './data';
import { dbSettings } from './db';
import { eventsSettings } from './events';
import { filesSettings } from './files';
import { gatewaySettings } from './gateway';
import { healthSettings } from './health';
import { identitySettings } from './identity';
import { modulesSettings } from './modules';
import { moneySettings } from './money';
import { notifySettings } from './notify';
import { resilienceSettings } from './resilience';
import { refuseInProduction } from './production';
import { runtimeSettings } from './runtime';
import { compileSettings, type Resolved } from './setting';
import { temporalSettings } from './temporal';
import { deepFreeze } from '../deep-freeze';

export type { AuthProviderSettings } from './auth-providers';
export { ConfigError } from './setting';

/**
 * The one place that reads process.env (docs/decisions/platform.md, Configuration). Each domain declares its variables once, in
 * its own part (`./<domain>.ts`: name, rule, default, and the member it becomes); this composes the
 * parts into one Config. Values are validated once at start-up and frozen, so a bad value stops the
 * process with a message naming the variable instead of failing later.
 */
const settings = {
  ...runtimeSettings,
  ...gatewaySettings,
  ...healthSettings,
  ...resilienceSettings,
  ...dbSettings,
  ...eventsSettings,
  ...temporalSettings,
  ...filesSettings,
  ...notifySettings,
  ...auditSettings,
  ...billingSettings,
  ...moneySettings,
  ...dataSettings,
  ...accessSettings,
  ...modulesSettings,
  ...identitySettings,
};

const compiled = compileSettings(settings);

export type Config = Resolved<typeof settings>;

/** Every environment variable the configuration reads (.env.example describes each). */
export const CONFIG_VARIABLES: readonly string[] = compiled.variables;

/** Reads `.env` (if present) beneath the real environment: the real environment always wins. */
function readDotEnv(): Record<string, string> {
  try {
    const text = readFileSync(join(repoRoot, '.env'), 'utf8');
    const entries = text.split('\n')
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith('#') && line.includes('='))
      .map((line): [string, string] => [line.slice(0, line.indexOf('=')).trim(), line.slice(line.indexOf('=') + 1).trim()]);
    return Object.fromEntries(entries);
  } catch {
    return {};
  }
}

/**
 * The configuration of `env`, validated. With NODE_ENV=production it is also refused when a secret
 * keeps its public development value, a key would be generated locally or a development switch is
 * on (common/config/production.ts), each refusal naming its variable.
 */
export function loadConfig(env: NodeJS.ProcessEnv = { ...readDotEnv(), ...process.env }): Readonly<Config> {
  const loaded = compiled.load(env);
  if (loaded.env === 'production') refuseInProduction(loaded, compiled.load({}), env);
  return deepFreeze(loaded);
}

let cached: Readonly<Config> | undefined;

/** The process-wide configuration; entry points call it once so a bad value fails at start-up. */
export function config(): Readonly<Config> {
  cached ??= loadConfig();
  return cached;
}
