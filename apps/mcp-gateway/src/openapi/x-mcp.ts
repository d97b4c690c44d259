// The `x-mcp` extension on an operation: a name, title, description or annotations of the
// spec author's choosing, or `hidden` to leave the operation out. Checked strictly: a typo
// is an error that names the field, not a silent default.

import type { ToolAnnotations } from '../tools/tool.js';
import { SpecError } from './json-schema.js';

export interface XMcp {
  name?: string;
  title?: string;
  description?: string;
  hidden?: boolean;
  annotations?: Partial<ToolAnnotations>;
}

export function readXMcp(value: unknown): XMcp {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SpecError('x-mcp must be an object with name, title, description, hidden or annotations');
  }
  const x = value as Record<string, unknown>;
  for (const key of Object.keys(x)) {
    if (!['name', 'title', 'description', 'hidden', 'annotations'].includes(key)) {
      throw new SpecError(
        `x-mcp has an unknown field '${key}' (allowed: name, title, description, hidden, annotations)`,
      );
    }
  }
  for (const key of ['name', 'title', 'description'] as const) {
    if (x[key] !== undefined && typeof x[key] !== 'string') throw new SpecError(`x-mcp.${key} must be a string`);
  }
  if (x.hidden !== undefined && typeof x.hidden !== 'boolean')
    throw new SpecError('x-mcp.hidden must be true or false');
  if (x.annotations !== undefined) {
    const a = x.annotations as Record<string, unknown>;
    if (typeof a !== 'object' || a === null || Array.isArray(a))
      throw new SpecError('x-mcp.annotations must be an object');
    for (const [k, v] of Object.entries(a)) {
      const hint = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'].includes(k);
      if (!(k === 'title' ? typeof v === 'string' : hint && typeof v === 'boolean')) {
        throw new SpecError(
          `x-mcp.annotations.${k} is not allowed (title: a string; readOnlyHint, destructiveHint, idempotentHint, openWorldHint: true or false)`,
        );
      }
    }
  }
  return x as XMcp;
}
