/**
 * The parser class behind joi-to-json's 'open-api-3.1' output (joi-to-json ships types for its
 * parse() only); api/openapi/json-schema.ts extends it where its output says less than joi checks.
 */
declare module 'joi-to-json/lib/parsers/open-api-3.1' {
  /** One node of Joi's describe() output. */
  export interface JoiDescription {
    type?: string;
    allow?: unknown[];
    rules?: { name: string; args?: Record<string, unknown> }[];
    [key: string]: unknown;
  }

  export type JsonSchemaNode = Record<string, unknown>;

  export default class JoiOpenApiThreePointOneSchemaParser {
    constructor(options?: Record<string, unknown>);
    parse(joiSpec: JoiDescription, definitions?: Record<string, unknown>, level?: number): JsonSchemaNode;
    _setNumberFieldProperties(fieldSchema: JsonSchemaNode, fieldDefn: JoiDescription): void;
    _setStringFieldProperties(fieldSchema: JsonSchemaNode, fieldDefn: JoiDescription): void;
    _setObjectProperties(schema: JsonSchemaNode, joiSpec: JoiDescription, definitions: Record<string, unknown>, level: number): void;
  }
}
