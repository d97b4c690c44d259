// Hostile input for the fuzz tests (the toy API's and the gateway's): JSON-RPC messages and raw bodies that are wrong in every
// way a client (or a model) can get them wrong. Seeded through fast-check.
import fc from 'fast-check';

/** Values with the shapes that break naive code: prototype keys, huge, deep, odd numbers. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  fc.constantFrom(
    1e308,
    -1e308,
    2 ** 53 + 1,
    -0,
    5e-324,
    '',
    ' ',
    '\u0000',
    '\r\nX-Injected: 1',
    '../../admin',
    '%2F..%2Fadmin',
    'e-05/../../admin/faults',
    '__proto__',
    'constructor',
  ),
  fc.nat({ max: 300_000 }).map((n) => 'x'.repeat(n)),
  fc.nat({ max: 2_000 }).map((depth) => {
    let v: unknown = 1;
    for (let i = 0; i < depth; i++) v = [v];
    return v;
  }),
  // Objects whose own keys are __proto__ / constructor / prototype (JSON.parse makes them own
  // properties; an object literal would not).
  fc
    .record({ a: fc.jsonValue({ maxDepth: 1 }), b: fc.jsonValue({ maxDepth: 1 }) })
    .map(({ a, b }) =>
      JSON.parse(`{"__proto__":${JSON.stringify(a)},"constructor":${JSON.stringify(b)},"prototype":{"polluted":true}}`),
    ),
);

export const TOOL_NAMES = [
  'list_employees',
  'get_employee',
  'office_days',
  'list_emails',
  'create_digest',
  'reply_to_email',
];

const methods = fc.oneof(
  fc.constantFrom(
    'initialize',
    'notifications/initialized',
    'ping',
    'tools/list',
    'tools/call',
    'server/discover',
    'resources/list',
    'prompts/get',
    'notifications/cancelled',
    'logging/setLevel',
    '__proto__',
    'constructor',
    'toString',
  ),
  fc.string({ maxLength: 40 }),
  hostileValue,
);

const toolCallParams = fc.record(
  {
    name: fc.oneof(fc.constantFrom(...TOOL_NAMES), hostileValue),
    arguments: fc.oneof(
      fc.dictionary(
        fc.constantFrom('employee_id', 'email_id', 'date', 'limit', 'cursor', 'body', '__proto__', 'x'),
        hostileValue,
        {
          maxKeys: 4,
        },
      ),
      hostileValue,
    ),
    _meta: fc.oneof(hostileValue, fc.record({ progressToken: hostileValue, 'agentwire.dev/deadlineMs': hostileValue })),
  },
  { requiredKeys: [] },
);

export const hostileMessage: fc.Arbitrary<unknown> = fc.oneof(
  fc.record(
    {
      jsonrpc: fc.oneof({ weight: 5, arbitrary: fc.constant('2.0') }, hostileValue),
      id: fc.oneof(fc.integer(), fc.string({ maxLength: 20 }), fc.constant(null), hostileValue),
      method: methods,
      params: fc.oneof(toolCallParams, hostileValue),
    },
    { requiredKeys: [] },
  ),
  hostileValue,
);

/** A body as bytes: JSON of a message or a batch, broken JSON, or bytes that are not UTF-8. */
export const hostileBody: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 6, arbitrary: hostileMessage.map((m) => Buffer.from(JSON.stringify(m) ?? 'undefined')) },
  fc.array(hostileMessage, { maxLength: 5 }).map((ms) => Buffer.from(JSON.stringify(ms))),
  hostileMessage.map((m) => {
    const text = JSON.stringify(m) ?? '';
    return Buffer.from(text.slice(0, Math.floor(text.length / 2)));
  }),
  fc.string({ maxLength: 200 }).map((s) => Buffer.from(s)),
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
  fc.nat({ max: 20_000 }).map((depth) => Buffer.from(`${'['.repeat(depth)}${']'.repeat(depth)}`)),
  fc.nat({ max: 20_000 }).map((depth) => Buffer.from(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`)),
  // A tool call whose argument nests up to 100,000 deep: JSON.parse takes it, JSON.stringify and
  // every recursive walker overflow on it (written as text: the test's own stringify would too).
  fc
    .record({ depth: fc.nat({ max: 100_000 }), tool: fc.constantFrom(...TOOL_NAMES), array: fc.boolean() })
    .map(({ depth, tool, array }) => {
      const [open, close] = array ? ['[', ']'] : ['{"a":', '}'];
      const deep = `${open.repeat(depth)}1${close.repeat(depth)}`;
      return Buffer.from(
        `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${tool}","arguments":{"employee_id":${deep}}}}`,
      );
    }),
);

/** Checks that `value` is one well-formed JSON-RPC response (or notification from the server). */
export function wellFormedJsonRpc(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not an object';
  const m = value as Record<string, unknown>;
  if (m.jsonrpc !== '2.0') return 'jsonrpc is not "2.0"';
  if ('method' in m) return typeof m.method === 'string' ? undefined : 'method is not a string';
  if (!('id' in m)) return 'no id';
  if (m.id !== null && typeof m.id !== 'string' && typeof m.id !== 'number') return 'id of a bad type';
  if ('result' in m === 'error' in m) return 'not exactly one of result and error';
  if ('error' in m) {
    const e = m.error as Record<string, unknown>;
    if (!Number.isInteger(e?.code) || typeof e?.message !== 'string')
      return 'error without an integer code and a message';
  }
  return undefined;
}
