import { STATUS_CODES } from 'node:http';
import type Joi from 'joi';
import { NAMESPACES, RouteConfigurationError, type AnyRoute, type Namespace, type ResponseLinks, type RouteRegistry } from '../http/route-registry';
import { UNSTORABLE_TEXT_RULE } from '../http/storable-text';
import { PROTOTYPE_KEY_RULE } from '../http/to-problem';
import { toJsonSchema as joiToJsonSchema } from './json-schema';
import { problemSchema } from './problem.schema';

/** A JSON Schema (OpenAPI 3.1 dialect) as joi-to-json produces it. */
type JsonSchema = { type?: string; properties?: Record<string, JsonSchema>; required?: string[]; description?: string; [key: string]: unknown };

export type OpenApiDocument = {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  servers: { url: string }[];
  paths: Record<string, Record<string, unknown>>;
  components: Record<string, Record<string, unknown>>;
};

const PROBLEM_REF = { $ref: '#/components/schemas/Problem' };
const problemContent = { 'application/problem+json': { schema: PROBLEM_REF } };

function toJsonSchema(schema: Joi.Schema): JsonSchema {
  return joiToJsonSchema(schema);
}

/** `/wallets/:walletId` → `/wallets/{walletId}` */
function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  description?: string;
  schema: JsonSchema;
}

/** A route's path, query and declared header parameters (RouteSchemas.headers: `Idempotency-Key`, signatures). */
function parametersOf(schema: Joi.ObjectSchema | undefined, location: Parameter['in']): Parameter[] {
  if (!schema) return [];
  const { properties = {}, required = [] } = toJsonSchema(schema);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...propertySchema } = property;
    return {
      name,
      in: location,
      required: location === 'path' || required.includes(name),
      ...(description ? { description } : {}),
      schema: propertySchema,
    };
  });
}

/** A response's headers (RouteSchemas.responseHeaders) as OpenAPI Header Objects. */
function headersOf(schema: Joi.ObjectSchema): Record<string, unknown> {
  return Object.fromEntries(parametersOf(schema, 'header').map(({ name, in: _location, ...header }) => [name, header]));
}

/** OpenAPI Link Objects, each named by its target operation. */
function linksOf(links: ResponseLinks): Record<string, unknown> {
  return Object.fromEntries(Object.entries(links).map(([operationId, { parameters, requestBody }]) => [operationId, {
    operationId,
    ...(parameters ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
  }]));
}

/**
 * Every link of the document names one of its operations, and only that operation's parameters and
 * body fields: a link to a renamed operation or parameter stops the gateway at start-up, as a
 * broken route does (api/http/route-registry.ts), instead of leading fuzzers and clients nowhere.
 */
function checkLinks(namespace: Namespace, routes: readonly AnyRoute[]): void {
  const byId = new Map(routes.map((route) => [route.operationId, route]));
  for (const route of routes) {
    for (const [status, links] of Object.entries(route.schemas.links ?? {})) {
      for (const [operationId, { parameters = {}, requestBody = {} }] of Object.entries(links)) {
        const where = `${route.operationId} ${status}: link to ${operationId}`;
        const target = byId.get(operationId);
        if (!target) throw new RouteConfigurationError(`${where}: no such operation in the ${namespace} document`);
        const targetParameters = new Set([target.schemas.params, target.schemas.query, target.schemas.headers].flatMap((schema) => keysOf(schema)));
        const targetFields = new Set(target.schemas.body ? keysOf(target.schemas.body) : []);
        for (const name of Object.keys(parameters)) {
          if (!targetParameters.has(name)) throw new RouteConfigurationError(`${where}: ${operationId} has no parameter ${name}`);
        }
        for (const name of Object.keys(requestBody)) {
          if (!targetFields.has(name)) throw new RouteConfigurationError(`${where}: the body of ${operationId} has no field ${name}`);
        }
      }
    }
  }
}

function keysOf(schema: Joi.Schema | undefined): string[] {
  return Object.keys((schema?.describe() as { keys?: Record<string, unknown> } | undefined)?.keys ?? {});
}

/** A step-up route has a second 401: a valid token whose sign-in is too old (docs/reference/identity.md#rule-46). */
function unauthorizedOf(route: AnyRoute): string {
  if (!route.stepUp) return 'unauthorized';
  const keys = route.stepUp.apiKeys === 'refused' ? ' An API key is refused with 403 forbidden.' : '';
  return 'unauthorized; or reauthentication-required: a high-value action, and the sign-in behind the token is older than '
    + `STEP_UP_MAX_AGE_SECONDS (maxAge in the problem): sign in again and repeat the request.${keys}`;
}

function responsesOf(route: AnyRoute): Record<string, unknown> {
  const declared = Object.entries(route.schemas.response).map(([status, schema]): [string, unknown] => {
    const bytes = route.schemas.bytes?.[Number(status)];
    const content = {
      ...(schema ? { 'application/json': { schema: toJsonSchema(schema) } } : {}),
      ...(bytes ? { [bytes]: { schema: { type: 'string', format: 'binary' } } } : {}),
    };
    const headers = route.schemas.responseHeaders?.[Number(status)];
    const links = route.schemas.links?.[Number(status)];
    return [status, {
      description: STATUS_CODES[Number(status)] ?? 'Response',
      ...(headers ? { headers: headersOf(headers) } : {}),
      ...(Object.keys(content).length > 0 ? { content } : {}),
      ...(links ? { links: linksOf(links) } : {}),
    }];
  });
  return {
    ...Object.fromEntries(declared),
    400: { description: 'validation-error: the request does not match this schema', content: problemContent },
    ...(route.auth === 'bearer' ? { 401: { description: unauthorizedOf(route), content: problemContent } } : {}),
    default: { description: 'Any other error, as an RFC 9457 problem', content: problemContent },
  };
}

function operationOf(route: AnyRoute): Record<string, unknown> {
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [route.namespace],
    parameters: [
      ...parametersOf(route.schemas.params, 'path'),
      ...parametersOf(route.schemas.query, 'query'),
      ...parametersOf(route.schemas.headers, 'header'),
    ],
    ...(route.schemas.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: toJsonSchema(route.schemas.body) } } } }
      : {}),
    ...(route.streamedBody
      ? { requestBody: { required: true, content: { [route.streamedBody.mediaType]: { schema: toJsonSchema(route.streamedBody.schema) } } } }
      : {}),
    responses: responsesOf(route),
    // An empty list states that the route needs no credentials.
    security: route.auth === 'public' ? [] : [{ bearerAuth: [] }],
  };
}

/** The route as the document shows it: itself, or its concrete operations (RouteDefinition.documentedAs). */
function documentedRoutes(route: AnyRoute): AnyRoute[] {
  return route.documentedAs ? route.documentedAs().map((operation) => ({ ...route, ...operation })) : [route];
}

/**
 * One OpenAPI 3.1 document per namespace, generated from the same joi schemas the guard
 * validates with. Paths are relative to the servers `/v1` and `/api/v1`.
 */
export function buildOpenApiDocument(namespace: Namespace, routes: readonly AnyRoute[], version: string): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  const documented = routes.flatMap(documentedRoutes);
  checkLinks(namespace, documented);
  for (const route of documented) {
    const path = openApiPath(route.path);
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operationOf(route) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: `Platform ${namespace} API`,
      version,
      description: `The ${namespace} routes of the platform gateway. Every error is an RFC 9457 problem (application/problem+json). ${UNSTORABLE_TEXT_RULE} ${PROTOTYPE_KEY_RULE}`,
    },
    servers: [{ url: '/v1' }, { url: '/api/v1' }],
    paths,
    components: {
      schemas: { Problem: toJsonSchema(problemSchema) },
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    },
  };
}

/** Every namespace has a document, empty until its routes land, so the docs URLs never 404. */
export function buildOpenApiDocuments(registry: RouteRegistry, version: string): Map<Namespace, OpenApiDocument> {
  return new Map(NAMESPACES.map((namespace) => [namespace, buildOpenApiDocument(namespace, registry.inNamespace(namespace), version)]));
}
