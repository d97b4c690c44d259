// Turns an OpenAPI 3.0/3.1 document into MCP tools: one per operation, with a flat input
// schema (path, query, header and body parameters merged), an output schema from the main
// 2xx response, annotations from the method, and the binding needed to call it back.
// An operation that cannot be used is reported by name with the reason; the rest still load.
import { deref, type JsonSchema, SchemaConverter, SpecError, targetOf } from './json-schema.js';
import { NameRegistry, nameFromRoute, sanitizeName } from './tool-names.js';

export type ParamLocation = 'path' | 'query' | 'header';

export interface ToolAnnotations {
  title?: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint?: boolean;
}

export type UpstreamAuth = { type: 'bearer' } | { type: 'header'; name: string } | { type: 'query'; name: string };

export interface ToolBinding {
  method: string;
  /** The path template, e.g. `/emails/{id}/reply`. */
  path: string;
  params: Array<{ arg: string; name: string; in: ParamLocation; required: boolean }>;
  body:
    | { mode: 'merged'; props: Array<{ arg: string; name: string }>; required: boolean }
    | { mode: 'whole'; arg: string; required: boolean }
    | undefined;
  output: { kind: 'json'; wrapped: boolean } | { kind: 'image' } | { kind: 'text' };
  /** The operation can answer with an event stream (progress can be forwarded). */
  streams: boolean;
  /** How the upstream key is sent, from the spec's security scheme; empty: no auth. */
  auth: UpstreamAuth[];
  /** The argument that carries an Idempotency-Key header, when the operation has one. */
  idempotencyKeyArg: string | undefined;
}

export interface Tool {
  name: string;
  title?: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations: ToolAnnotations;
  binding: ToolBinding;
}

export interface LoadResult {
  tools: Tool[];
  /** One line per operation that was skipped: `GET /path (operationId): reason`. */
  problems: string[];
  title: string;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization']);

interface XMcp {
  name?: string;
  title?: string;
  description?: string;
  hidden?: boolean;
  annotations?: Partial<ToolAnnotations>;
}

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

function readXMcp(value: unknown): XMcp {
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

function securityFor(document: Record<string, unknown>, operation: Record<string, unknown>): UpstreamAuth[] {
  const requirements = (operation.security ?? document.security ?? []) as Array<Record<string, unknown>>;
  if (requirements.length === 0) return [];
  const schemes = ((document.components as Record<string, unknown> | undefined)?.securitySchemes ?? {}) as Record<
    string,
    Record<string, unknown>
  >;
  const unsupported: string[] = [];
  for (const requirement of requirements) {
    const names = Object.keys(requirement);
    if (names.length === 0) return [];
    const applied: UpstreamAuth[] = [];
    for (const name of names) {
      const scheme = deref(document, schemes[name]);
      if (!scheme) {
        unsupported.push(`${name} (not in components.securitySchemes)`);
        break;
      }
      if (scheme.type === 'http' && String(scheme.scheme).toLowerCase() === 'bearer') applied.push({ type: 'bearer' });
      else if (scheme.type === 'oauth2' || scheme.type === 'openIdConnect') applied.push({ type: 'bearer' });
      else if (scheme.type === 'apiKey' && scheme.in === 'header')
        applied.push({ type: 'header', name: String(scheme.name) });
      else if (scheme.type === 'apiKey' && scheme.in === 'query')
        applied.push({ type: 'query', name: String(scheme.name) });
      else {
        unsupported.push(`${name} (${String(scheme.type)}${scheme.scheme ? ` ${String(scheme.scheme)}` : ''})`);
        break;
      }
    }
    if (applied.length === names.length) return applied;
  }
  throw new SpecError(
    `no supported security scheme: ${unsupported.join(', ')}; supported are bearer, apiKey in header or query`,
  );
}

function mainSuccess(document: unknown, operation: Record<string, unknown>) {
  const responses = (operation.responses ?? {}) as Record<string, unknown>;
  const key = ['200', '201', '202', '203', '206', '2XX', '2xx', '204'].find((k) => k in responses);
  if (!key) return undefined;
  const response = deref(document, responses[key]) as { content?: Record<string, { schema?: unknown }> };
  return response?.content ?? {};
}

function convertOperation(
  document: Record<string, unknown>,
  openapi30: boolean,
  method: string,
  path: string,
  pathItem: Record<string, unknown>,
  operation: Record<string, unknown>,
  names: NameRegistry,
): Tool | undefined {
  const x = readXMcp(operation['x-mcp']);
  if (x.hidden) return undefined;
  // One converter per schema, so each keeps only the $defs it uses itself.
  const converter = new SchemaConverter(document, openapi30);
  const outputConverter = new SchemaConverter(document, openapi30);

  // Parameters: path-level, overridden by operation-level ones with the same name and location.
  const merged = new Map<string, Record<string, unknown>>();
  for (const raw of [...((pathItem.parameters ?? []) as unknown[]), ...((operation.parameters ?? []) as unknown[])]) {
    const p = deref(document, raw) as Record<string, unknown>;
    if (typeof p?.name !== 'string' || typeof p.in !== 'string') throw new SpecError('a parameter has no name or in');
    merged.set(`${p.in}:${p.name}`, p);
  }
  const params: Array<{ name: string; in: ParamLocation; required: boolean; schema: JsonSchema }> = [];
  for (const p of merged.values()) {
    const location = p.in as string;
    if (location === 'cookie') throw new SpecError(`cookie parameter '${String(p.name)}' is not supported`);
    if (location === 'header' && IGNORED_HEADERS.has(String(p.name).toLowerCase())) continue;
    if (location !== 'path' && location !== 'query' && location !== 'header') {
      throw new SpecError(`parameter '${String(p.name)}' has an unknown location '${location}'`);
    }
    const schema = converter.convert(p.schema ?? { type: 'string' });
    if (typeof p.description === 'string' && schema.description === undefined) schema.description = p.description;
    if (p.example !== undefined && schema.examples === undefined) schema.examples = [p.example];
    params.push({ name: String(p.name), in: location, required: location === 'path' || p.required === true, schema });
  }
  for (const match of path.matchAll(/\{([^}]+)\}/g)) {
    if (!params.some((p) => p.in === 'path' && p.name === match[1])) {
      throw new SpecError(`path parameter '{${match[1]}}' is not declared`);
    }
  }

  // The body: a JSON object's properties join the top level; anything else is one `body` argument.
  let bodySchema: JsonSchema | undefined;
  let bodyRequired = false;
  if (operation.requestBody !== undefined) {
    const requestBody = deref(document, operation.requestBody) as {
      required?: boolean;
      content?: Record<string, { schema?: unknown }>;
    };
    const content = requestBody.content ?? {};
    const jsonType = Object.keys(content).find((t) => t === 'application/json' || /\+json$/.test(t));
    if (!jsonType) {
      throw new SpecError(
        `request body type ${Object.keys(content).join(', ') || '(none)'} is not supported (only JSON)`,
      );
    }
    bodySchema = converter.convert(content[jsonType]?.schema ?? {});
    bodyRequired = requestBody.required === true;
  }
  const bodyTarget = bodySchema ? targetOf(bodySchema, converter.defs) : undefined;
  // A JSON object with declared properties joins the top level; anything else (no properties,
  // additional ones allowed, a union) stays one `body` argument with its own schema.
  const bodyProps =
    bodyTarget?.properties &&
    Object.keys(bodyTarget.properties as object).length > 0 &&
    !bodyTarget.additionalProperties &&
    !bodyTarget.oneOf &&
    !bodyTarget.anyOf &&
    !bodyTarget.allOf
      ? (bodyTarget.properties as Record<string, JsonSchema>)
      : undefined;

  // Argument names: a clash between locations gets a location suffix on every side of it.
  const occurrences = new Map<string, number>();
  for (const p of params) occurrences.set(p.name, (occurrences.get(p.name) ?? 0) + 1);
  for (const name of Object.keys(bodyProps ?? {})) occurrences.set(name, (occurrences.get(name) ?? 0) + 1);
  if (bodySchema && !bodyProps) occurrences.set('body', (occurrences.get('body') ?? 0) + 1);
  const argName = (name: string, location: string) =>
    (occurrences.get(name) ?? 0) > 1 ? `${name}__${location}` : name;

  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const binding: ToolBinding = {
    method: method.toUpperCase(),
    path,
    params: [],
    body: undefined,
    output: { kind: 'text' },
    streams: false,
    auth: securityFor(document, operation),
    idempotencyKeyArg: undefined,
  };
  for (const p of params) {
    const arg = argName(p.name, p.in);
    properties[arg] = p.schema;
    if (p.required) required.push(arg);
    binding.params.push({ arg, name: p.name, in: p.in, required: p.required });
    if (p.in === 'header' && p.name.toLowerCase() === 'idempotency-key') binding.idempotencyKeyArg = arg;
  }
  if (bodySchema && bodyProps) {
    const bodyRequiredProps = new Set((bodyTarget?.required as string[] | undefined) ?? []);
    const props: Array<{ arg: string; name: string }> = [];
    for (const [name, schema] of Object.entries(bodyProps)) {
      const arg = argName(name, 'body');
      properties[arg] = schema;
      if (bodyRequired && bodyRequiredProps.has(name)) required.push(arg);
      props.push({ arg, name });
    }
    binding.body = { mode: 'merged', props, required: bodyRequired };
  } else if (bodySchema) {
    const arg = argName('body', 'body');
    properties[arg] = bodySchema;
    if (bodyRequired) required.push(arg);
    binding.body = { mode: 'whole', arg, required: bodyRequired };
  }

  const inputSchema: JsonSchema = { type: 'object', properties, additionalProperties: false };
  if (required.length > 0) inputSchema.required = required;

  // The output: the main 2xx JSON response (objects as they are, anything else wrapped).
  let outputSchema: JsonSchema | undefined;
  const success = mainSuccess(document, operation);
  if (success) {
    const types = Object.keys(success);
    binding.streams = types.includes('text/event-stream');
    const jsonType = types.find((t) => t === 'application/json' || /\+json$/.test(t));
    if (jsonType) {
      const schema = outputConverter.convert(success[jsonType]?.schema ?? {});
      const target = targetOf(schema, outputConverter.defs);
      const isObject = target.type === 'object' || (target.properties !== undefined && target.type === undefined);
      outputSchema = isObject ? schema : { type: 'object', properties: { result: schema }, required: ['result'] };
      binding.output = { kind: 'json', wrapped: !isObject };
    } else if (types.some((t) => t.startsWith('image/'))) {
      binding.output = { kind: 'image' };
    }
  }

  const summary = typeof operation.summary === 'string' ? operation.summary.trim() : '';
  const details = typeof operation.description === 'string' ? operation.description.trim() : '';
  const description =
    x.description ??
    ((details?.startsWith(summary) ? details : [summary, details].filter(Boolean).join('. ')) ||
      `${binding.method} ${path}`);
  const wanted = x.name
    ? sanitizeName(x.name)
    : typeof operation.operationId === 'string'
      ? sanitizeName(operation.operationId)
      : nameFromRoute(method, path);
  const title = x.title ?? (summary || undefined);
  const annotations: ToolAnnotations = {
    ...annotationsFor(binding.method),
    ...(title ? { title } : {}),
    ...x.annotations,
  };

  const tool: Tool = {
    name: names.claim(wanted),
    description,
    inputSchema: converter.withDefs(inputSchema),
    annotations,
    binding,
  };
  if (title) tool.title = title;
  if (outputSchema) tool.outputSchema = outputConverter.withDefs(outputSchema);
  return tool;
}

/** Converts a parsed OpenAPI document. Throws only when the document as a whole is unusable. */
export function openApiToTools(document: unknown): LoadResult {
  if (typeof document !== 'object' || document === null) throw new SpecError('the OpenAPI document is not an object');
  const doc = document as Record<string, unknown>;
  const version = typeof doc.openapi === 'string' ? doc.openapi : undefined;
  if (!version || !/^3\.[01]\./.test(version)) {
    throw new SpecError(
      `only OpenAPI 3.0 and 3.1 are supported; this document says ${version ? `openapi: ${version}` : doc.swagger ? `swagger: ${String(doc.swagger)}` : 'no version'}`,
    );
  }
  const openapi30 = version.startsWith('3.0.');
  const names = new NameRegistry();
  const tools: Tool[] = [];
  const problems: string[] = [];
  for (const [path, rawItem] of Object.entries((doc.paths ?? {}) as Record<string, unknown>)) {
    let pathItem: Record<string, unknown>;
    try {
      pathItem = deref(doc, rawItem) as Record<string, unknown>;
    } catch (error) {
      problems.push(`${path}: ${(error as Error).message}`);
      continue;
    }
    for (const method of METHODS) {
      const operation = pathItem?.[method] as Record<string, unknown> | undefined;
      if (!operation) continue;
      try {
        const tool = convertOperation(doc, openapi30, method, path, pathItem, operation, names);
        if (tool) tools.push(tool);
      } catch (error) {
        const id = typeof operation.operationId === 'string' ? ` (${operation.operationId})` : '';
        problems.push(`${method.toUpperCase()} ${path}${id}: ${(error as Error).message}`);
      }
    }
  }
  const info = (doc.info ?? {}) as { title?: unknown };
  return { tools, problems, title: typeof info.title === 'string' ? info.title : 'API' };
}
