// The conformance fixture upstream: a small REST API whose OpenAPI document, through the
// gateway's ordinary conversion, gives the official conformance suite the fixture tools its
// server scenarios call by name (x-mcp.name). Each answers the way a REST API can: text, a PNG,
// a WAV, bytes of another type (an embedded resource), an error, an event stream (progress),
// and one operation that changes the document itself (the suite's "mutate the tool list").
// The tasks scenarios' fixtures are long jobs the REST way (202 Accepted + Location, a status URL
// to poll, DELETE to cancel), which the gateway makes tasks of: slow_compute, failing_job (a job
// that fails, x-mcp.task: required), protocol_error_job (its status URL is on another origin, so
// the gateway cannot follow it: a failed task), confirm_delete (a deletion job), and greet (sync).
// The input_required scenarios' fixtures are deletions a person must approve first
// (x-mcp.approval): the gateway answers the first call with an input_required result whose one
// elicitation asks for the approval, and the retry, with the answer and the signed requestState,
// makes the call (DELETE /approvals/{kind}); a tampered state is refused before it.
// test_reconnection answers after a second, so that the gateway (POST_STREAM_POLL_MS) ends its
// stream before the answer and the client polls for it (server-sse-polling, SEP-1699).
// What a REST answer cannot be, the suite's excuses name by check id (scripts/conformance.mjs):
// several content types in one answer, a tool that asks the client something mid-call.
// Usage: const fixture = await startFixtureUpstream({ onChange }); fixture.document(), .url, .close()
import { createServer } from 'node:http';

// A 1x1 PNG, and a WAV of 8 silent samples: the smallest valid files of their kinds.
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360f8cf000000030101001827c9a20000000049454e44ae426082',
  'hex',
);
function wav() {
  const samples = Buffer.alloc(8);
  const head = Buffer.alloc(44);
  head.write('RIFF', 0);
  head.writeUInt32LE(36 + samples.length, 4);
  head.write('WAVEfmt ', 8);
  head.writeUInt32LE(16, 16);
  head.writeUInt16LE(1, 20); // PCM
  head.writeUInt16LE(1, 22); // mono
  head.writeUInt32LE(8000, 24);
  head.writeUInt32LE(8000, 28);
  head.writeUInt16LE(1, 32);
  head.writeUInt16LE(8, 34);
  head.write('data', 36);
  head.writeUInt32LE(samples.length, 40);
  return Buffer.concat([head, samples]);
}

const ok = (content) => ({ 200: { description: 'OK', content } });
const operation = (name, summary, content, extra = {}) => ({
  operationId: name.replace(/^test_/, 'fixture_'),
  summary,
  'x-mcp': { name },
  responses: ok(content),
  ...extra,
});

const json = { 'application/json': { schema: { type: 'object' } } };
const accepted = { 202: { description: 'Accepted: poll the Location', content: json } };
const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
const jsonBody = (properties, required) => ({
  required: true,
  content: { 'application/json': { schema: { type: 'object', properties, required } } },
});

/** The fixture's OpenAPI document after the trigger operation has run `changes` times. */
export function fixtureDocument(url, changes = 0) {
  const paths = {
    '/text': { get: operation('test_simple_text', 'Plain text', { 'text/plain': { schema: { type: 'string' } } }) },
    '/image': { get: operation('test_image_content', 'A PNG image', { 'image/png': {} }) },
    '/audio': { get: operation('test_audio_content', 'A WAV recording', { 'audio/wav': {} }) },
    '/document': {
      get: operation('test_embedded_resource', 'A file of another type, as bytes', { 'application/octet-stream': {} }),
    },
    '/error': {
      get: {
        ...operation('test_error_handling', 'Always fails', { 'application/json': { schema: { type: 'object' } } }),
        responses: { 200: { description: 'never' }, 422: { description: 'the error it always gives' } },
      },
    },
    '/progress': {
      get: operation('test_tool_with_progress', 'Counts to three, as an event stream', {
        'application/json': { schema: { type: 'object' } },
        'text/event-stream': { schema: { type: 'string' } },
      }),
    },
    '/reconnection': {
      get: operation('test_reconnection', 'Answers after a second', { 'text/plain': { schema: { type: 'string' } } }),
    },
    '/log': {
      get: operation('test_logging_tool', 'Answers at once', { 'application/json': { schema: { type: 'object' } } }),
    },
    '/greet': {
      get: {
        ...operation('greet', 'Greets someone', { 'text/plain': { schema: { type: 'string' } } }),
        parameters: [{ name: 'name', in: 'query', required: true, schema: { type: 'string' } }],
      },
    },
    '/jobs': {
      post: {
        ...operation('slow_compute', 'Computes for some seconds: a job to poll (none for 0 s)', json),
        requestBody: jsonBody({ seconds: { type: 'number', minimum: 0, maximum: 600 }, label: { type: 'string' } }, [
          'seconds',
        ]),
        responses: { ...ok(json), ...accepted },
      },
    },
    '/jobs/{id}': {
      get: { ...operation('job_status', 'How a job goes', json), parameters: [idParameter] },
      delete: {
        ...operation('cancel_job', 'Stops a job', json),
        parameters: [idParameter],
        responses: { 204: { description: 'Stopped' } },
      },
    },
    '/failing-jobs': {
      post: {
        ...operation('failing_job', 'A job that fails after a second', json),
        'x-mcp': { name: 'failing_job', task: 'required' },
        responses: accepted,
      },
    },
    '/broken-jobs': {
      post: {
        ...operation('protocol_error_job', 'A job whose status is on another origin', json),
        responses: accepted,
      },
    },
    '/files/{filename}': {
      delete: {
        ...operation('confirm_delete', 'Deletes a file: a job to poll', json),
        parameters: [{ name: 'filename', in: 'path', required: true, schema: { type: 'string' } }],
        responses: accepted,
      },
    },
    // JSON Schema 2020-12 in a body: $schema, constraints across its properties (allOf/anyOf,
    // if/then/else), and a model with an $anchor, which the gateway lists under $defs.
    '/contact': {
      post: {
        ...operation('json_schema_2020_12_tool', 'Takes a contact, with JSON Schema 2020-12 rules', json),
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                $schema: 'https://json-schema.org/draft/2020-12/schema',
                type: 'object',
                properties: {
                  name: { type: 'string' },
                  address: { $ref: '#/components/schemas/address' },
                  contactMethod: { type: 'string', enum: ['phone', 'email'] },
                  phone: { type: 'string' },
                  email: { type: 'string' },
                },
                allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
                if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
                // biome-ignore lint/suspicious/noThenProperty: `then` is a JSON Schema keyword here
                then: { required: ['phone'] },
                else: { required: ['email'] },
                additionalProperties: false,
              },
            },
          },
        },
      },
    },
    ...Object.fromEntries(
      [
        ['elicitation', { key: 'user_name', message: 'What is your name? (approves the deletion)' }],
        ['request_state', 'required'],
        ['tampered_state', 'required'],
        ['multi_round', 'required'],
        ['multiple_inputs', 'required'],
        ['capabilities', 'required'],
      ].map(([kind, approval]) => [
        `/approvals/${kind}`,
        {
          delete: {
            ...operation(`test_input_required_result_${kind}`, 'Deletes a record, once a person approves', {
              'text/plain': { schema: { type: 'string' } },
            }),
            'x-mcp': { name: `test_input_required_result_${kind}`, approval },
          },
        },
      ]),
    ),
    '/change': {
      post: operation('test_trigger_tool_change', 'Adds an operation to this document', {
        'application/json': { schema: { type: 'object' } },
      }),
    },
  };
  // Each change gives the document another operation, so every trigger is a change to reload.
  if (changes > 0) {
    paths['/added'] = {
      get: operation(`test_added_tool_${changes}`, 'Here since the document changed', {
        'application/json': { schema: { type: 'object' } },
      }),
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'agentwire conformance fixture', version: String(changes + 1) },
    servers: [{ url }],
    paths,
    components: {
      schemas: {
        address: {
          $anchor: 'addressDef',
          type: 'object',
          properties: { street: { type: 'string' }, city: { type: 'string' } },
        },
      },
    },
  };
}

/** The JSON body of a request ({} when empty); rejects when it is not JSON. */
function readJson(request) {
  return new Promise((resolve, reject) => {
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk) => {
      text += chunk;
    });
    request.on('end', () => {
      try {
        resolve(text === '' ? {} : JSON.parse(text));
      } catch (error) {
        reject(error);
      }
    });
    request.on('error', reject);
  });
}

/** Starts the fixture on 127.0.0.1 (a free port). `onChange` runs after the document changed. */
export async function startFixtureUpstream({ onChange = async () => undefined } = {}) {
  let changes = 0;
  // The jobs started (id -> what it is and when it ends); the fixture lives as long as one run.
  const jobs = new Map();
  let jobCount = 0;
  const startJob = (response, location) =>
    response
      .writeHead(202, { 'content-type': 'application/json', location, 'retry-after-ms': '250' })
      .end('{"status":"accepted"}');
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const send = (status, type, body) => response.writeHead(status, { 'content-type': type }).end(body);
    if (path === '/openapi.json') return send(200, 'application/json', JSON.stringify(fixtureDocument(url, changes)));
    if (path === '/text') return send(200, 'text/plain', 'This is a simple text response from the fixture upstream.');
    if (path === '/image') return send(200, 'image/png', PNG);
    if (path === '/audio') return send(200, 'audio/wav', wav());
    if (path === '/document') return send(200, 'application/octet-stream', Buffer.from('fixture bytes\n'));
    if (path === '/error') {
      return send(
        422,
        'application/json',
        JSON.stringify({ error: { type: 'fixture_error', message: 'This operation always fails, on purpose.' } }),
      );
    }
    if (path.startsWith('/approvals/') && request.method === 'DELETE') {
      // Reached only after the approval: the gateway checked the signed requestState first.
      return send(200, 'text/plain', `Hello! Deleted ${path.slice(11)}, as approved; state-ok.`);
    }
    // Slower than the gateway's POST_STREAM_POLL_MS here: its answer comes to the client's poll.
    if (path === '/reconnection') {
      const timer = setTimeout(() => send(200, 'text/plain', 'Reconnection test completed.'), 1_000);
      response.on('close', () => clearTimeout(timer));
      return undefined;
    }
    if (path === '/log' || path === '/added' || path === '/contact')
      return send(200, 'application/json', '{"ok":true}');
    if (path === '/progress') {
      if (!(request.headers.accept ?? '').includes('text/event-stream')) {
        return send(200, 'application/json', '{"counted":3}');
      }
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      let n = 0;
      const timer = setInterval(() => {
        n += 1;
        if (n <= 3) response.write(`event: delta\ndata: ${JSON.stringify({ index: n, text: `step ${n} of 3 ` })}\n\n`);
        else {
          clearInterval(timer);
          response.end(`event: done\ndata: ${JSON.stringify({ counted: 3 })}\n\n`);
        }
      }, 20);
      request.on('close', () => clearInterval(timer));
      return undefined;
    }
    if (path === '/greet') {
      const name = new URL(request.url ?? '/', url).searchParams.get('name') ?? 'nobody';
      return send(200, 'text/plain', `Hello, ${name}!`);
    }
    if (request.method === 'POST' && ['/jobs', '/failing-jobs', '/broken-jobs'].includes(path)) {
      return void readJson(request).then(
        (body) => {
          if (path === '/jobs' && Number(body.seconds) === 0) {
            return send(200, 'application/json', JSON.stringify({ result: `computed ${body.label ?? ''} at once` }));
          }
          if (path === '/broken-jobs') return startJob(response, 'http://127.0.0.1:9/status-elsewhere');
          const id = String(++jobCount);
          const seconds = path === '/failing-jobs' ? 1 : Number(body.seconds) || 1;
          jobs.set(id, {
            kind: path === '/failing-jobs' ? 'failing' : 'compute',
            label: body.label,
            endsAt: Date.now() + seconds * 1000,
          });
          return startJob(response, `/jobs/${id}`);
        },
        () => send(400, 'application/json', '{"error":{"type":"bad_request","message":"the body must be JSON"}}'),
      );
    }
    if (request.method === 'DELETE' && path.startsWith('/files/')) {
      const id = String(++jobCount);
      jobs.set(id, {
        kind: 'delete',
        label: decodeURIComponent(path.slice('/files/'.length)),
        endsAt: Date.now() + 500,
      });
      return startJob(response, `/jobs/${id}`);
    }
    const job = /^\/jobs\/([^/]+)$/.exec(path);
    if (job) {
      const state = jobs.get(job[1]);
      if (!state) return send(404, 'application/json', '{"error":{"type":"not_found","message":"no such job"}}');
      if (request.method === 'DELETE') {
        state.cancelled = true;
        return response.writeHead(204).end();
      }
      if (state.cancelled) return send(200, 'application/json', '{"status":"cancelled"}');
      if (Date.now() < state.endsAt) {
        response.writeHead(202, { 'content-type': 'application/json', 'retry-after-ms': '250' });
        return response.end('{"status":"running"}');
      }
      if (state.kind === 'failing') {
        return send(200, 'application/json', '{"status":"failed","error":{"message":"the job failed, on purpose"}}');
      }
      const result = state.kind === 'delete' ? `deleted ${state.label}` : `computed ${state.label ?? ''}`;
      return send(200, 'application/json', JSON.stringify({ status: 'completed', result }));
    }
    if (path === '/change' && request.method === 'POST') {
      changes += 1;
      // The gateway is told before the answer goes: the list has changed by the time the caller hears back.
      onChange().then(
        () => send(200, 'application/json', '{"changed":true}'),
        (error) => send(500, 'application/json', JSON.stringify({ error: { type: 'reload', message: String(error) } })),
      );
      return undefined;
    }
    return send(404, 'application/json', '{"error":{"type":"not_found","message":"no such fixture route"}}');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    documentUrl: `${url}/openapi.json`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
