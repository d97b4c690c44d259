// The gateway's config file (MCP_GATEWAY_CONFIG or --config): several upstream APIs behind one
// endpoint, each with its own base URL, spec, key, selection and call defaults. YAML or JSON
// (JSON is YAML). Every mistake is reported with the line and the field, e.g.
//   gateway.yaml:7 upstreams[1].auth.keyEnv: GITHUB_TOKEN is not set in the environment
// Keys never go in the file: it names the environment variable that holds each one.
//
//   upstreams:
//     - name: github
//       url: https://api.github.com
//       spec: ./github.json              # a URL, or a file relative to this one
//       auth: { scheme: bearer, keyEnv: GITHUB_TOKEN }
//       include: [tag:issues]
//       readOnly: true
//     - name: toy
//       url: http://127.0.0.1:8080       # spec: the upstream's /openapi.json
//       auth: { keyEnv: TOY_API_KEY }    # scheme: spec (as the document says)
//       identity: exchange               # call it as the signed-in user (RFC 8693); default service
//                                        # (connect: with each user's own token, given in their browser;
//                                        #  its connect block names the third party: connect/settings.ts)
//       forwardHeaders: [x-tenant]       # caller headers copied to this upstream only
//       idempotencyHeader: true          # it dedupes writes by Idempotency-Key (else the gateway does)
//       deny: [{ tools: [op:delete_*], claim: { sub: ben } }]
//       allow: [{ tools: [tag:admin], scope: admin }]
//       quota: { calls: 60, perSeconds: 60, per: tool }   # per caller, across replicas with Redis
//       resilience: { breaker: { failureRatio: 0.5, minimumThroughput: 20 }, hedge: p95, maxConcurrent: 64 }
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { secretProblem } from '@agentwire/schemas/settings';
import { createAjv } from '@agentwire/schemas/validation';
import { CONNECT_SCHEMA, type ConnectFile, connectFileOf } from '../connect/settings.js';
import {
  type AccessRule,
  parseSelectors,
  SelectionError,
  type ToolSelection,
  type UpstreamRules,
} from '../tools/selection.js';
import type { UpstreamAuth } from '../tools/tool.js';
import { forwardHeaderProblem } from './forward-headers.js';
import {
  RESILIENCE_SCHEMA,
  type ResilienceFile,
  type ResilienceSettings,
  resilienceFromEnv,
  resilienceFromFile,
} from './resilience.js';

// The YAML parser (about 50 ms to load) is loaded when a config file is read: a gateway started
// without one (most are) does not pay for it at start-up.
const require = createRequire(import.meta.url);

export class UpstreamsConfigError extends Error {
  override readonly name = 'UpstreamsConfigError';
}

/** One upstream, as the gateway uses it. */
export interface Upstream {
  name: string;
  url: string;
  /** A URL or an absolute file path; default `${url}/openapi.json`. */
  spec: string | undefined;
  apiKey: string | undefined;
  auth: UpstreamAuth | undefined;
  selection: ToolSelection;
  deadlineMs: number | undefined;
  timeoutMs: number | undefined;
  maxRetries: number | undefined;
  maxResponseBytes: number | undefined;
  maxUploadBytes: number | undefined;
  maxResultBytes: number | undefined;
  maxResultTokens: number | undefined;
  /** This upstream's tools mode; undefined: TOOLS_MODE. */
  mode: 'auto' | 'static' | 'dynamic' | undefined;
  /** This upstream's output schemas (on, off, unlisted); undefined: OUTPUT_SCHEMAS. */
  outputSchemas?: boolean | 'unlisted' | undefined;
  /**
   * service: the upstream's own key; exchange: a token for the signed-in user (RFC 8693); connect:
   * each user's own token from the upstream's third party (connect/flow.ts). Default service.
   */
  identity?: 'service' | 'exchange' | 'connect' | undefined;
  /** identity: connect's third party. */
  connect?: ConnectFile | undefined;
  /** The resource an exchanged token is for (its `aud`); default the upstream's URL. */
  audience?: string | undefined;
  /** Caller headers copied to this upstream (lower case). */
  forwardHeaders?: string[] | undefined;
  /** The upstream dedupes every write by an Idempotency-Key header: a caller's key goes there (tools/writes.ts). */
  idempotencyHeader?: boolean | undefined;
  /** Who may call which of its tools, beyond the scopes the document declares (tools/access.ts). */
  rules?: UpstreamRules | undefined;
  /** How many calls one caller may make (tools/quota.ts). */
  quota?: QuotaSettings | undefined;
  /** Breaker, hedging, bulkhead, longest server-asked wait (upstream/resilience.ts); default the environment's. */
  resilience?: ResilienceSettings | undefined;
}

/** A token bucket per caller: `calls` per `perSeconds`, counted per upstream or per tool. */
export interface QuotaSettings {
  calls: number;
  perSeconds: number;
  per: 'upstream' | 'tool';
}

export const MAX_UPSTREAMS = 32;
/** Room for `name.` in a 64-character tool name. */
const NAME = '^[A-Za-z0-9_-]{1,20}$';

const positive = (max: number) => ({ type: 'integer', minimum: 1, maximum: max });
/** The most rules of each kind per upstream. */
export const MAX_RULES = 64;
const SCOPE = { type: 'string', pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]{1,200}$' };
const CLAIM_VALUE = { type: 'string', maxLength: 500 };
const RULES = {
  type: 'array',
  maxItems: MAX_RULES,
  items: {
    type: 'object',
    additionalProperties: false,
    properties: {
      tools: { type: 'array', maxItems: 64, items: { type: 'string', minLength: 1 } },
      scope: SCOPE,
      scopes: { type: 'array', maxItems: 32, items: SCOPE },
      claim: {
        type: 'object',
        maxProperties: 16,
        additionalProperties: {
          anyOf: [CLAIM_VALUE, { type: 'array', minItems: 1, maxItems: 64, items: CLAIM_VALUE }],
        },
      },
    },
  },
};
const SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['upstreams'],
  properties: {
    upstreams: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_UPSTREAMS,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'url'],
        properties: {
          name: { type: 'string', pattern: NAME },
          url: { type: 'string', minLength: 1 },
          spec: { type: 'string', minLength: 1 },
          auth: {
            type: 'object',
            additionalProperties: false,
            properties: {
              scheme: { enum: ['spec', 'bearer', 'basic', 'header', 'query'] },
              name: { type: 'string', pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$" },
              keyEnv: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
            },
          },
          include: { type: 'array', items: { type: 'string' } },
          exclude: { type: 'array', items: { type: 'string' } },
          readOnly: { type: 'boolean' },
          mode: { enum: ['auto', 'static', 'dynamic'] },
          outputSchemas: { enum: ['on', 'off', 'unlisted'] },
          deadlineMs: positive(300_000),
          timeoutMs: positive(600_000),
          maxRetries: { type: 'integer', minimum: 0, maximum: 10 },
          maxResponseBytes: positive(1024 ** 3),
          maxUploadBytes: positive(1024 ** 3),
          maxResultBytes: { type: 'integer', minimum: 1024, maximum: 100 * 1024 * 1024 },
          maxResultTokens: { type: 'integer', minimum: 100, maximum: 10_000_000 },
          identity: { enum: ['service', 'exchange', 'connect'] },
          connect: CONNECT_SCHEMA,
          audience: { type: 'string', minLength: 1, maxLength: 2048 },
          forwardHeaders: { type: 'array', maxItems: 32, items: { type: 'string', minLength: 1, maxLength: 100 } },
          idempotencyHeader: { type: 'boolean' },
          resilience: RESILIENCE_SCHEMA,
          allow: RULES,
          deny: RULES,
          quota: {
            type: 'object',
            additionalProperties: false,
            required: ['calls', 'perSeconds'],
            properties: {
              calls: positive(1_000_000),
              perSeconds: positive(86_400),
              per: { enum: ['upstream', 'tool'] },
            },
          },
        },
      },
    },
  },
};

const FIELD_HINTS: Record<string, string> = {
  key: 'keys never go in the file: put the key in an environment variable and name it in auth.keyEnv',
  apiKey: 'keys never go in the file: put the key in an environment variable and name it in auth.keyEnv',
};

/** Why a string cannot be an upstream's base URL (not http(s), or with credentials in it), or undefined. */
export function upstreamUrlProblem(url: string): string | undefined {
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'not http(s)';
    if (u.username || u.password) return 'credentials in the URL';
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** Reads and checks the file; `env` supplies the keys the file names. */
/** How many nodes a config file's YAML aliases may expand to (the yaml library's own default). */
const MAX_ALIAS_COUNT = 100;

/** The gateway's own secrets: never sent upstream, whatever a config file says. */
const GATEWAY_SECRETS = new Set([
  'MCP_GATEWAY_TOKEN',
  'OAUTH_INTROSPECTION_CLIENT_SECRET',
  'OAUTH_EXCHANGE_CLIENT_SECRET',
  'CONNECT_TOKEN_KEY',
  'REDIS_PASSWORD',
  'REDIS_URL',
  'OTEL_EXPORTER_OTLP_HEADERS',
]);
/** Which variables may hold an upstream's key, unless UPSTREAM_KEY_ENVS says otherwise. */
const DEFAULT_KEY_ENVS = '*_KEY,*_TOKEN,*_PAT,*_CLIENT_SECRET';

/**
 * Why `name` may not be read as an upstream's key, or undefined. A config file names the variable
 * whose value the gateway sends upstream, so only variables the operator marks as upstream keys
 * may be named (UPSTREAM_KEY_ENVS: names, `PREFIX*` or `*SUFFIX`, comma-separated; by default
 * `*_KEY,*_TOKEN,*_PAT,*_CLIENT_SECRET`), and never one of the gateway's own secrets.
 */
export function keyEnvProblem(name: string, env: NodeJS.ProcessEnv): string | undefined {
  if (GATEWAY_SECRETS.has(name)) {
    return `${name} is one of the gateway's own secrets and is never sent upstream; put the upstream's key in a variable of its own`;
  }
  const marks = (env.UPSTREAM_KEY_ENVS || DEFAULT_KEY_ENVS)
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean);
  const marked = marks.some((m) =>
    m.startsWith('*') ? name.endsWith(m.slice(1)) : m.endsWith('*') ? name.startsWith(m.slice(0, -1)) : name === m,
  );
  if (marked) return undefined;
  return `${name} is not marked as an upstream key: UPSTREAM_KEY_ENVS (${marks.join(',')}) names the variables a config may send upstream; add it there, or use a name it allows`;
}

export function readUpstreamsConfig(file: string, env: NodeJS.ProcessEnv = process.env): Upstream[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UpstreamsConfigError(`cannot read the config file ${file}: ${(error as Error).message}`);
  }
  const { LineCounter, parseDocument } = require('yaml') as typeof import('yaml');
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true });
  const lineOf = (path: Array<string | number>): number => {
    for (let n = path.length; n >= 0; n--) {
      const node = doc.getIn(path.slice(0, n), true) as { range?: [number, number, number] } | undefined;
      if (node?.range) return lines.linePos(node.range[0]).line;
    }
    return 1;
  };
  const fieldOf = (path: Array<string | number>) =>
    path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${p}`)).join('') || '(the file)';
  const fail = (path: Array<string | number>, message: string): never => {
    throw new UpstreamsConfigError(`${file}:${lineOf(path)} ${fieldOf(path)}: ${message}`);
  };
  const syntax = doc.errors[0];
  if (syntax) {
    throw new UpstreamsConfigError(
      `${file}:${syntax.linePos?.[0].line ?? 1} is neither JSON nor YAML: ${syntax.message.split('\n')[0]}`,
    );
  }
  let value: unknown;
  try {
    // Aliases are expanded here: a few lines of anchors can stand for billions of nodes.
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    if (!(error instanceof ReferenceError)) throw error;
    throw new UpstreamsConfigError(
      `${file}: its YAML aliases expand to more than ${MAX_ALIAS_COUNT} nodes (MAX_ALIAS_COUNT); write the repeated parts out`,
    );
  }
  const validate = createAjv({ useDefaults: false }).compile(SCHEMA);
  if (!validate(value)) {
    const error = validate.errors?.[0];
    const path = (error?.instancePath ?? '')
      .split('/')
      .slice(1)
      .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
    if (error?.keyword === 'additionalProperties') {
      const extra = String((error.params as { additionalProperty: string }).additionalProperty);
      const hint = Object.hasOwn(FIELD_HINTS, extra) ? FIELD_HINTS[extra] : undefined;
      fail([...path, extra], hint ?? `unknown field; allowed: ${allowedAt(path).join(', ')}`);
    }
    if (error?.keyword === 'pattern' && path.at(-1) === 'name' && path.length === 3) {
      fail(path, 'a name is 1 to 20 letters, digits, _ or - (it prefixes each tool name)');
    }
    fail(
      path,
      `${error?.message ?? 'is not valid'}${error?.keyword === 'enum' ? ` (${JSON.stringify((error.params as { allowedValues: unknown[] }).allowedValues)})` : ''}`,
    );
  }
  const config = value as { upstreams: Array<Record<string, unknown>> };
  const seen = new Set<string>();
  return config.upstreams.map((raw, i) => {
    const at = (...rest: Array<string | number>) => ['upstreams', i, ...rest];
    const name = String(raw.name);
    if (seen.has(name)) fail(at('name'), `'${name}' names two upstreams; each needs its own name`);
    seen.add(name);
    const url = String(raw.url).replace(/\/$/, '');
    const urlProblem = upstreamUrlProblem(url);
    if (urlProblem) fail(at('url'), `must be an http(s) URL without credentials, got '${url}' (${urlProblem})`);
    const auth = (raw.auth ?? {}) as { scheme?: string; name?: string; keyEnv?: string };
    const scheme = auth.scheme ?? 'spec';
    if ((scheme === 'header' || scheme === 'query') && !auth.name) {
      fail(
        at('auth'),
        `scheme ${scheme} needs a name: the ${scheme === 'header' ? 'header' : 'query parameter'} that carries the key`,
      );
    }
    let apiKey: string | undefined;
    if (auth.keyEnv) {
      const refused = keyEnvProblem(auth.keyEnv, env);
      if (refused) fail(at('auth', 'keyEnv'), refused);
      apiKey = env[auth.keyEnv] || undefined;
      if (!apiKey) fail(at('auth', 'keyEnv'), `${auth.keyEnv} is not set in the environment`);
      const problem = secretProblem(auth.keyEnv, apiKey as string, 1);
      if (problem) fail(at('auth', 'keyEnv'), problem);
    }
    const rules = (field: 'include' | 'exclude') => {
      try {
        return parseSelectors(((raw[field] as string[] | undefined) ?? []).join(','), `upstreams[${i}].${field}`);
      } catch (error) {
        if (error instanceof SelectionError) return fail(at(field), error.message.replace(/^[^:]+: /, ''));
        throw error;
      }
    };
    const forwardHeaders = ((raw.forwardHeaders as string[] | undefined) ?? []).map((h) => h.toLowerCase());
    forwardHeaders.forEach((h, j) => {
      const problem = forwardHeaderProblem(h);
      if (problem) fail(at('forwardHeaders', j), `${h} ${problem}`);
    });
    const audience = raw.audience === undefined ? undefined : String(raw.audience);
    if (audience !== undefined && upstreamUrlProblem(audience)) {
      fail(
        at('audience'),
        `must be the API's http(s) URL as its tokens name it (aud), got '${audience.slice(0, 200)}'`,
      );
    }
    if (raw.connect !== undefined && raw.identity !== 'connect') {
      fail(at('connect'), 'a connect block goes with identity: connect (each user connects their own account)');
    }
    const connect =
      raw.identity === 'connect'
        ? connectFileOf(
            raw.connect as Record<string, unknown> | undefined,
            env,
            (secret) => keyEnvProblem(secret, env),
            (field, message) => fail(at(...field), message),
          )
        : undefined;
    const ruleList = (kind: 'allow' | 'deny'): AccessRule[] =>
      ((raw[kind] as Array<Record<string, unknown>> | undefined) ?? []).map((rule, j) => {
        let tools: AccessRule['tools'];
        try {
          tools = parseSelectors(((rule.tools as string[] | undefined) ?? []).join(','), `${name}.${kind}[${j}].tools`);
        } catch (error) {
          if (error instanceof SelectionError) return fail(at(kind, j, 'tools'), error.message.replace(/^[^:]+: /, ''));
          throw error;
        }
        const claims: Record<string, string[]> = {};
        for (const [claim, value] of Object.entries((rule.claim as Record<string, unknown> | undefined) ?? {})) {
          claims[claim] = Array.isArray(value) ? value.map(String) : [String(value)];
        }
        const scopes = [
          ...(rule.scope === undefined ? [] : [String(rule.scope)]),
          ...((rule.scopes as string[] | undefined) ?? []),
        ];
        return { name: `${name}.${kind}[${j}]`, tools, scopes, claims };
      });
    const access = { allow: ruleList('allow'), deny: ruleList('deny') };
    const quota = raw.quota as { calls: number; perSeconds: number; per?: 'upstream' | 'tool' } | undefined;
    const spec = raw.spec === undefined ? undefined : String(raw.spec);
    return {
      name,
      url,
      spec: spec === undefined || /^https?:/i.test(spec) ? spec : resolve(dirname(file), spec),
      apiKey,
      auth:
        scheme === 'bearer'
          ? { type: 'bearer' }
          : scheme === 'basic'
            ? { type: 'basic' }
            : scheme === 'header' || scheme === 'query'
              ? { type: scheme, name: String(auth.name) }
              : undefined,
      selection: { include: rules('include'), exclude: rules('exclude'), readOnly: raw.readOnly === true },
      deadlineMs: raw.deadlineMs as number | undefined,
      timeoutMs: raw.timeoutMs as number | undefined,
      maxRetries: raw.maxRetries as number | undefined,
      maxResponseBytes: raw.maxResponseBytes as number | undefined,
      maxUploadBytes: raw.maxUploadBytes as number | undefined,
      maxResultBytes: raw.maxResultBytes as number | undefined,
      maxResultTokens: raw.maxResultTokens as number | undefined,
      mode: raw.mode as 'auto' | 'static' | 'dynamic' | undefined,
      // The schema allows on, off and unlisted only.
      outputSchemas:
        raw.outputSchemas === undefined
          ? undefined
          : raw.outputSchemas === 'unlisted'
            ? 'unlisted'
            : raw.outputSchemas === 'on',
      identity: raw.identity as 'service' | 'exchange' | 'connect' | undefined,
      connect,
      audience,
      forwardHeaders,
      idempotencyHeader: raw.idempotencyHeader === true,
      rules: access,
      quota: quota ? { calls: quota.calls, perSeconds: quota.perSeconds, per: quota.per ?? 'upstream' } : undefined,
      resilience: resilienceFromFile(raw.resilience as ResilienceFile | undefined, resilienceFromEnv(env)),
    };
  });
}

function allowedAt(path: Array<string | number>): string[] {
  if (path.length === 0) return ['upstreams'];
  if (path.length === 2) return Object.keys(SCHEMA.properties.upstreams.items.properties);
  if (path[2] === 'quota') return Object.keys(SCHEMA.properties.upstreams.items.properties.quota.properties);
  if (path[2] === 'resilience' && path[3] === 'breaker')
    return Object.keys(RESILIENCE_SCHEMA.properties.breaker.oneOf[1].properties);
  if (path[2] === 'resilience') return Object.keys(RESILIENCE_SCHEMA.properties);
  if (path[2] === 'allow' || path[2] === 'deny') return Object.keys(RULES.items.properties);
  if (path[2] === 'connect') return Object.keys(CONNECT_SCHEMA.properties);
  return Object.keys(SCHEMA.properties.upstreams.items.properties.auth.properties);
}
