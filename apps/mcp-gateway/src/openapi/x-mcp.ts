// The `x-mcp` extension on an operation: a name, title, description or annotations of the
// spec author's choosing, `hidden` to leave the operation out, or `headers` to mirror arguments
// into Mcp-Param-* headers (SEP-2243). Checked strictly: a typo is an error that names the
// field, not a silent default.

import type { ToolAnnotations } from '../tools/tool.js';
import { SpecError } from './json-schema.js';

export interface XMcp {
  name?: string;
  title?: string;
  description?: string;
  hidden?: boolean;
  annotations?: Partial<ToolAnnotations>;
  /** Argument name -> the header name after `Mcp-Param-` a client repeats it in. */
  headers?: Record<string, string>;
  /**
   * A long operation (tasks extension): `optional` when the document does not say so with a 202
   * response, `required` when only a client of the extension may call it.
   */
  task?: 'optional' | 'required';
  /**
   * A person approves each call before it runs (`required`, or an object that also names the
   * question's key in an input_required result and its message); `never`: not even under
   * APPROVAL=destructive (tools/approval.ts).
   */
  approval?: 'required' | 'never' | { key?: string; message?: string };
  /** false: no outputSchema for this operation, so its results carry no structuredContent (an answer its schema does not describe). */
  outputSchema?: false;
}

const FIELDS = ['name', 'title', 'description', 'hidden', 'annotations', 'headers', 'task', 'approval', 'outputSchema'];
const APPROVAL_FIELDS = ['key', 'message'];

function readApproval(value: unknown): void {
  if (value === 'required' || value === 'never') return;
  const hint =
    "x-mcp.approval must be 'required', 'never', or an object {key, message}: the input request's key (1 to 64 of a-z, 0-9, _) and the question a person reads (at most 500 characters)";
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new SpecError(hint);
  for (const [k, v] of Object.entries(value)) {
    if (!APPROVAL_FIELDS.includes(k)) throw new SpecError(`${hint}; '${k}' is not one of them`);
    const ok =
      k === 'key' ? typeof v === 'string' && /^[a-z0-9_]{1,64}$/.test(v) : typeof v === 'string' && v.length <= 500;
    if (!ok) throw new SpecError(hint);
  }
}
// RFC 9110's token characters: what a header name may be made of.
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,64}$/;

function readHeaders(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SpecError('x-mcp.headers must be an object: argument name -> header name (Mcp-Param-<name>)');
  }
  const seen = new Map<string, string>();
  for (const [argument, name] of Object.entries(value)) {
    if (typeof name !== 'string' || !HEADER_NAME.test(name)) {
      throw new SpecError(
        `x-mcp.headers.${argument} must be a header name: 1 to 64 of the token characters of RFC 9110 (letters, digits, !#$%&'*+-.^_\`|~), no spaces or colons`,
      );
    }
    const other = seen.get(name.toLowerCase());
    if (other !== undefined) {
      throw new SpecError(
        `x-mcp.headers gives '${argument}' and '${other}' the same header name (case does not count)`,
      );
    }
    seen.set(name.toLowerCase(), argument);
  }
  return value as Record<string, string>;
}

export function readXMcp(value: unknown): XMcp {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SpecError(
      'x-mcp must be an object with name, title, description, hidden, annotations, headers, task, approval or outputSchema',
    );
  }
  const x = value as Record<string, unknown>;
  for (const key of Object.keys(x)) {
    if (!FIELDS.includes(key)) {
      throw new SpecError(`x-mcp has an unknown field '${key}' (allowed: ${FIELDS.join(', ')})`);
    }
  }
  for (const key of ['name', 'title', 'description'] as const) {
    if (x[key] !== undefined && typeof x[key] !== 'string') throw new SpecError(`x-mcp.${key} must be a string`);
  }
  if (x.hidden !== undefined && typeof x.hidden !== 'boolean')
    throw new SpecError('x-mcp.hidden must be true or false');
  if (x.outputSchema !== undefined && x.outputSchema !== false)
    throw new SpecError(
      'x-mcp.outputSchema can only be false (no outputSchema and no structuredContent for this operation)',
    );
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
  if (x.headers !== undefined) readHeaders(x.headers);
  if (x.approval !== undefined) readApproval(x.approval);
  if (x.task !== undefined && x.task !== 'optional' && x.task !== 'required') {
    throw new SpecError(
      "x-mcp.task must be 'optional' (a client of the tasks extension gets a task, any other the finished result) or 'required' (only a client of the extension may call it)",
    );
  }
  return x as XMcp;
}
