// What every step of turning one operation into a tool reads: the document, the operation and
// where it sits, its x-mcp extension, and the schema converters (one per schema, so each
// keeps only the $defs it uses itself).
import { type DroppedPart, type PatternChecks, SchemaConverter } from './json-schema.js';
import { readXMcp, type XMcp } from './x-mcp.js';

export interface OperationContext {
  document: Record<string, unknown>;
  /** OpenAPI 3.0 (nullable, exclusiveMinimum as booleans) rather than 3.1. */
  openapi30: boolean;
  /** Lower case, as the document has it. */
  method: string;
  path: string;
  pathItem: Record<string, unknown>;
  operation: Record<string, unknown>;
  x: XMcp;
  /** For the input schema: parameters and body. */
  input: SchemaConverter;
  /** For the output schema: loose (see output-schema.ts). */
  output: SchemaConverter;
  /** Parts left out of the tool (a pattern, a parameter), each named among the skipped parts. */
  dropped: DroppedPart[];
}

export function operationContext(
  operation: Omit<OperationContext, 'x' | 'input' | 'output' | 'dropped'>,
  patterns: PatternChecks,
): OperationContext {
  const dropped: DroppedPart[] = [];
  return {
    ...operation,
    x: readXMcp(operation.operation['x-mcp']),
    input: new SchemaConverter(operation.document, operation.openapi30, false, patterns, dropped),
    output: new SchemaConverter(operation.document, operation.openapi30, true, patterns, dropped),
    dropped,
  };
}
