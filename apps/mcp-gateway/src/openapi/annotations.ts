// A tool's hints from its HTTP method: GET reads; PUT is idempotent; DELETE destroys, and
// is idempotent; POST is neither. `x-mcp.annotations` overrides them, and a summary is the title.

import type { ToolAnnotations } from '../tools/tool.js';
import type { OperationContext } from './operation-context.js';

function annotationsFor(method: string): Omit<ToolAnnotations, 'title'> {
  switch (method) {
    case 'GET':
    case 'HEAD':
    case 'OPTIONS':
      return { readOnlyHint: true, destructiveHint: false, idempotentHint: true };
    case 'PUT':
      return { readOnlyHint: false, destructiveHint: false, idempotentHint: true };
    case 'DELETE':
      return { readOnlyHint: false, destructiveHint: true, idempotentHint: true };
    default:
      return { readOnlyHint: false, destructiveHint: false, idempotentHint: false };
  }
}

export function annotationsOf(ctx: OperationContext, title: string | undefined): ToolAnnotations {
  return {
    ...annotationsFor(ctx.method.toUpperCase()),
    ...(title ? { title } : {}),
    ...ctx.x.annotations,
  };
}
