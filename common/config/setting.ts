import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Joi from 'joi';

/**
 * The declarative form of the configuration (docs/decisions/platform.md, Configuration). Each environment variable is declared
 * once, where the config member it becomes is declared: its name, its joi rule (type, default,
 * validation) and, when the member is not the value itself, how it is derived. The member's type is
 * inferred from the rule, so no interface has to be kept in step with the variables.
 */
export class ConfigError extends Error {}

/** A joi custom rule for keys: base64 of exactly 32 bytes (AES-256). */
export const thirtyTwoBytes: Joi.CustomValidator<string> = (value, helpers) => (
  Buffer.from(value, 'base64').length === 32 ? value : helpers.error('any.invalid'));

/** The text of a file, or the code of why it cannot be read. */
function readText(file: string): { text: string } | { code: string } {
  try {
    return { text: readFileSync(file, 'utf8') };
  } catch (error) {
    return { code: (error as NodeJS.ErrnoException).code ?? 'error' };
  }
}

/**
 * A CA file of a TLS setting (DATABASE_SSL_CA_FILE, REDIS_TLS_CA_FILE, S3_CA_FILE, KAFKA_SSL_CA_FILE,
 * TEMPORAL_TLS_CA_FILE), or a client certificate (TEMPORAL_TLS_CERT_FILE): a readable PEM file with
 * at least one certificate, checked at start-up so a wrong path stops the process with the
 * variable's name instead of failing the first connection. The member stays the path; the clients'
 * factories read the file when they connect.
 */
export const caFile = () => Joi.string().custom((file: string, helpers) => {
  const read = readText(file);
  if ('code' in read) return helpers.message({ custom: `{{#label}} cannot be read (${read.code}: {{#value}})` });
  return read.text.includes('-----BEGIN CERTIFICATE-----') ? file : helpers.message({ custom: '{{#label}} holds no PEM certificate ({{#value}})' });
});

/**
 * The private key of a client certificate (TEMPORAL_TLS_KEY_FILE): a readable, unencrypted PEM key
 * that belongs to the certificate of `certVariable`, so a key and certificate from two different
 * pairs stop the process at start-up rather than fail every TLS handshake.
 */
export const privateKeyFile = (certVariable: string) => Joi.string().custom((file: string, helpers) => {
  const read = readText(file);
  if ('code' in read) return helpers.message({ custom: `{{#label}} cannot be read (${read.code}: {{#value}})` });
  let key;
  try {
    key = createPrivateKey(read.text);
  } catch {
    return helpers.message({ custom: '{{#label}} holds no unencrypted PEM private key ({{#value}})' });
  }
  const certFile = (helpers.state.ancestors as Array<Record<string, unknown>>)[0]?.[certVariable];
  const cert = typeof certFile === 'string' ? readText(certFile) : undefined;
  // An unreadable certificate is reported on its own variable.
  if (!cert || !('text' in cert)) return file;
  try {
    if (new X509Certificate(cert.text).checkPrivateKey(key)) return file;
  } catch {
    return file;
  }
  return helpers.message({ custom: `{{#label}} is not the key of ${certVariable}'s certificate ({{#value}})` });
});

type SchemaValue<S> = S extends Joi.AnySchema<infer T> ? T : never;

/** The final value of another setting, for a member derived from more than its own variable. */
export type Lookup = <T>(setting: Setting<T>) => T;

export class Setting<T> {
  constructor(
    readonly env: string,
    readonly schema: Joi.AnySchema,
    readonly derive: (value: never, lookup: Lookup) => T,
  ) {}
}

type Derive = (value: never, lookup: Lookup) => unknown;

/** A variable whose rule gives it a value (a default, or required). */
export function setting<S extends Joi.AnySchema>(env: string, schema: S): Setting<SchemaValue<S>>;
export function setting<S extends Joi.AnySchema, T>(env: string, schema: S, derive: (value: SchemaValue<S>, lookup: Lookup) => T): Setting<T>;
export function setting(env: string, schema: Joi.AnySchema, derive: Derive = (value) => value): Setting<unknown> {
  return new Setting(env, schema, derive);
}

/** A variable that may be absent (no default): the member is undefined unless derived otherwise. */
export function optional<S extends Joi.AnySchema>(env: string, schema: S): Setting<SchemaValue<S> | undefined>;
export function optional<S extends Joi.AnySchema, T>(
  env: string, schema: S, derive: (value: SchemaValue<S> | undefined, lookup: Lookup) => T): Setting<T>;
export function optional(env: string, schema: Joi.AnySchema, derive: Derive = (value) => value): Setting<unknown> {
  return new Setting(env, schema, derive);
}

/** Config members, nested as the code reads them, whose leaves are settings. */
export interface SettingsTree { readonly [member: string]: Setting<unknown> | SettingsTree }

/** Members that may be undefined are optional members, as a hand-written interface would have them. */
type MayBeAbsent<T> = { [K in keyof T]: T[K] extends Setting<infer V> ? (undefined extends V ? K : never) : never }[keyof T];

/** The configuration a tree of settings describes. */
export type Resolved<T> = T extends Setting<infer V> ? V
  : { -readonly [K in keyof T as K extends MayBeAbsent<T> ? never : K]: Resolved<T[K]> }
    & { -readonly [K in keyof T as K extends MayBeAbsent<T> ? K : never]?: Resolved<T[K]> };

function leaves(tree: SettingsTree): Setting<unknown>[] {
  return Object.values(tree).flatMap((node) => (node instanceof Setting ? [node] : leaves(node)));
}

function resolve(tree: SettingsTree, lookup: Lookup): Record<string, unknown> {
  return Object.fromEntries(Object.entries(tree)
    .map(([member, node]) => [member, node instanceof Setting ? lookup(node) : resolve(node, lookup)]));
}

/**
 * One joi object over every variable of the tree (and of `alsoRead`, variables only other settings
 * derive from), so a bad environment is reported in full, each line naming its variable, and a rule
 * may refer to another variable (`.when('NODE_ENV', …)`). A variable declared twice is a bug.
 */
export function compileSettings<T extends SettingsTree>(tree: T, alsoRead: Setting<unknown>[] = []) {
  const all = [...leaves(tree), ...alsoRead];
  const twice = all.map((s) => s.env).filter((env, index, names) => names.indexOf(env) !== index);
  if (twice.length > 0) throw new ConfigError(`Configuration variables declared twice: ${twice.join(', ')}`);
  const schema = Joi.object<Record<string, never>>(Object.fromEntries(all.map((s) => [s.env, s.schema]))).unknown(true);
  return {
    variables: all.map((s) => s.env),
    load(env: Record<string, string | undefined>): Resolved<T> {
      const result = schema.validate(env, { abortEarly: false, convert: true });
      if (result.error) {
        const lines = result.error.details.map((d) => `  ${d.path.join('.')}: ${d.message}`);
        throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
      }
      const values = result.value;
      const lookup: Lookup = (s) => s.derive(values[s.env], lookup);
      return resolve(tree, lookup) as Resolved<T>;
    },
  };
}
