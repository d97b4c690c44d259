// What a model reads of a tool: the name it asks for (x-mcp, else the operationId, else the
// method and route, sanitized), a title from the summary, and a description from the summary
// and the description (without repeating one inside the other).
import type { OperationContext } from './operation-context.js';
import { nameFromRoute, sanitizeName } from './tool-names.js';

export interface ToolText {
  /** The name before it is made unique among the document's tools. */
  wantedName: string;
  title: string | undefined;
  description: string;
}

export function toolTextOf(ctx: OperationContext): ToolText {
  const { operation, x, method, path } = ctx;
  const summary = typeof operation.summary === 'string' ? operation.summary.trim() : '';
  const details = typeof operation.description === 'string' ? operation.description.trim() : '';
  const description =
    x.description ??
    ((details?.startsWith(summary) ? details : [summary, details].filter(Boolean).join('. ')) ||
      `${method.toUpperCase()} ${path}`);
  const wantedName = x.name
    ? sanitizeName(x.name)
    : typeof operation.operationId === 'string'
      ? sanitizeName(operation.operationId)
      : nameFromRoute(method, path);
  return { wantedName, title: x.title ?? (summary || undefined), description };
}
