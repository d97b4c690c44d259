// Real servers for the gateway's tests: the toy API in-process on loopback, the gateway over
// HTTP in-process or as a real process, and the official MCP SDK clients (v1 and v2) to
// drive it. Everything started here is stopped after each test.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { type App, buildApp, type ToyApiOptions } from '@agentwire/toy-api';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { FastifyRequest } from 'fastify';
import { afterEach, expect } from 'vitest';
import { createGateway, type GatewayOptions, type ServeHttpOptions, serveHttp } from '../../src/gateway.js';
import type { HttpServer } from '../../src/transports/http.js';

export const GATEWAY_BIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  while (cleanups.length > 0)
    await cleanups
      .pop()?.()
      .catch(() => undefined);
});

export function onCleanup(fn: () => Promise<unknown>): void {
  cleanups.push(fn);
}

export interface ToyApi {
  url: string;
  key: string;
  app: App;
  setFaults(config: unknown): Promise<void>;
}

export async function startToyApi(): Promise<ToyApi> {
  const key = `toy-${randomBytes(12).toString('hex')}`;
  const app = await buildApp({ apiKey: key, admin: true });
  await app.listen({ host: '127.0.0.1', port: 0 });
  cleanups.push(() => app.close());
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return {
    url,
    key,
    app,
    async setFaults(config) {
      const r = await fetch(`${url}/admin/faults`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(config),
      });
      if (r.status !== 200) throw new Error(await r.text());
    },
  };
}

export interface RecordingToyApi<T> {
  url: string;
  key: string;
  app: App;
  /** What `keep` took from each request, in order of arrival. */
  seen: T[];
}

/**
 * The toy API on loopback (built with `options`), keeping what `keep` takes from each request
 * it gets: what the gateway sent it. The gateway's GET of /openapi.json is left out unless
 * `withDocument` is set.
 */
export async function startRecordingToyApi<T>(
  keep: (request: FastifyRequest) => T,
  options: Partial<ToyApiOptions> & { withDocument?: boolean } = {},
): Promise<RecordingToyApi<T>> {
  const { withDocument = false, ...buildOptions } = options;
  const key = `toy-${randomBytes(12).toString('hex')}`;
  const app = await buildApp({ apiKey: key, ...buildOptions });
  const seen: T[] = [];
  app.addHook('onRequest', (request, _reply, done) => {
    if (withDocument || request.url !== '/openapi.json') seen.push(keep(request));
    done();
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  cleanups.push(() => app.close());
  return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, key, app, seen };
}

export interface HttpGateway {
  url: string;
  mcpUrl: string;
  token: string;
  store: HttpServer['store'];
  openConnections: HttpServer['openConnections'];
  /** Sessions whose GET stream is open (a gateway made by startHttpGatewayFor). */
  openStreams?: HttpServer['openStreams'];
  /** The gateway behind it (a gateway made by startHttpGatewayFor). */
  gateway?: Awaited<ReturnType<typeof createGateway>>;
  /** Where /metrics is, when it has a port of its own. */
  metricsUrl?: string | undefined;
  /** With graceMs: drains first, as on SIGTERM. */
  close(graceMs?: number): Promise<void>;
}

export function startHttpGateway(api: ToyApi, extra: Partial<ServeHttpOptions> = {}): Promise<HttpGateway> {
  return startHttpGatewayFor({ upstreamUrl: api.url, upstreamApiKey: api.key, pageSize: 5 }, extra);
}

/** A gateway over HTTP for any upstream and spec (the options of createGateway and serveHttp). */
export async function startHttpGatewayFor(
  options: GatewayOptions,
  extra: Partial<ServeHttpOptions> = {},
): Promise<HttpGateway> {
  const token = `gw-${randomBytes(16).toString('hex')}`;
  const gateway = await createGateway(options);
  const http = await serveHttp(gateway, { host: '127.0.0.1', port: 0, token, allowedOrigins: [], ...extra });
  cleanups.push(async () => {
    await http.close();
    await gateway.close();
  });
  return {
    url: http.url,
    mcpUrl: `${http.url}/mcp`,
    token,
    store: http.store,
    openConnections: http.openConnections,
    openStreams: http.openStreams,
    gateway,
    metricsUrl: http.metricsUrl,
    close: (graceMs?: number) => http.close(graceMs),
  };
}

/** A gateway as a real process. Resolves once it says where it listens (HTTP) or at once (stdio). */
export async function spawnGateway(env: Record<string, string>, args: string[] = []) {
  const child: ChildProcess = spawn(process.execPath, [GATEWAY_BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  cleanups.push(async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  return { child, stderr: () => stderr };
}

/** Makes the v1 client ask for an older revision (it has no option for it). */
export function withProtocolVersion<T extends Transport>(transport: T, version: string): T {
  const send = transport.send.bind(transport);
  transport.send = (message, options) =>
    send(
      'method' in message && message.method === 'initialize'
        ? { ...message, params: { ...message.params, protocolVersion: version } }
        : message,
      options,
    );
  return transport;
}

export function stdioV1(api: ToyApi, version?: string) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [GATEWAY_BIN, '--stdio'],
    env: { ...getDefaultEnvironment(), UPSTREAM_URL: api.url, UPSTREAM_API_KEY: api.key, TOOLS_PAGE_SIZE: '5' },
    stderr: 'pipe',
  });
  return connectV1(version ? withProtocolVersion(transport, version) : transport);
}

export function httpV1(gw: HttpGateway, version?: string) {
  const transport = new StreamableHTTPClientTransport(new URL(gw.mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${gw.token}` } },
  });
  return connectV1(version ? withProtocolVersion(transport, version) : transport);
}

async function connectV1<T extends Transport>(transport: T) {
  const client = new ClientV1({ name: 'agentwire-test', version: '1.0.0' });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return { client, transport };
}

export async function httpV2(gw: HttpGateway, mode: 'auto' | 'legacy' = 'auto') {
  const transport = new HttpV2(new URL(gw.mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${gw.token}` } },
  });
  const client = new ClientV2({ name: 'agentwire-test-v2', version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return { client, transport };
}

export async function stdioV2(api: ToyApi, mode: 'auto' | 'legacy' = 'auto') {
  const transport = new StdioV2({
    command: process.execPath,
    args: [GATEWAY_BIN, '--stdio'],
    env: { ...getDefaultEnvironment(), UPSTREAM_URL: api.url, UPSTREAM_API_KEY: api.key, TOOLS_PAGE_SIZE: '5' },
    stderr: 'pipe',
  });
  const client = new ClientV2({ name: 'agentwire-test-v2', version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return { client, transport };
}

/** A gateway over stdio, initialized (2025-11-25): what it writes, parsed, and how to send to it. */
export async function initializedStdio(env: Record<string, string>) {
  const { child, stderr } = await spawnGateway(env, ['--stdio']);
  const lines: unknown[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => lines.push(JSON.parse(line)));
  const send = (message: unknown) => child.stdin!.write(`${JSON.stringify(message)}\n`);
  send({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  });
  await expect.poll(() => lines.length).toBe(1);
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return { child, stderr, lines, send };
}

/** An `initialize` request as a client of a sessioned revision sends it (id 0). */
export function initializeRequest(
  revision = '2025-11-25',
  capabilities: Record<string, unknown> = {},
  clientName = 't',
): Record<string, unknown> {
  return {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: revision, capabilities, clientInfo: { name: clientName, version: '1' } },
  };
}

/**
 * Opens a session over HTTP with `initialize` (status 200 expected) and returns the headers of
 * every later request in it: `headers`, the session id and the revision.
 */
export async function openHttpSession(
  url: string,
  headers: Record<string, string>,
  { revision = '2025-11-25', capabilities = {} }: { revision?: string; capabilities?: Record<string, unknown> } = {},
): Promise<Record<string, string>> {
  const init = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify(initializeRequest(revision, capabilities)),
  });
  expect(init.status).toBe(200);
  await init.text();
  return { ...headers, 'mcp-session-id': init.headers.get('mcp-session-id') ?? '', 'mcp-protocol-version': revision };
}

/** The headers of a 2026-07-28 request (no session); `name` is the tool or task the method names. */
export function modernHeaders(token: string, method: string, name?: string): Record<string, string> {
  return {
    authorization: `Bearer ${token}`,
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
    ...(name === undefined ? {} : { 'mcp-name': name }),
  };
}

export interface ModernOptions {
  /** The client's capabilities, sent in `_meta`. Default none. */
  capabilities?: Record<string, unknown>;
  /** Headers that win over the usual ones. */
  headers?: Record<string, string>;
}

/**
 * One 2026-07-28 request as a client without a session sends it: the revision and capabilities
 * in `_meta` (joined to any `params._meta`), the method and name in headers. The answer is parsed
 * whether it came as JSON or as one SSE event.
 */
export async function modernRequest(
  gw: { mcpUrl: string; token: string },
  method: string,
  params: Record<string, unknown>,
  { capabilities = {}, headers = {} }: ModernOptions = {},
): Promise<{ status: number; body: { result?: any; error?: any } }> {
  const named = method === 'tools/call' ? params.name : method.startsWith('tasks/') ? params.taskId : undefined;
  const response = await fetch(gw.mcpUrl, {
    method: 'POST',
    headers: { ...modernHeaders(gw.token, method, typeof named === 'string' ? named : undefined), ...headers },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          ...(params._meta as object | undefined),
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': capabilities,
        },
      },
    }),
  });
  const text = await response.text();
  const json = text.startsWith('event:') ? (/^data: (.*)$/m.exec(text)?.[1] ?? '{}') : text;
  return { status: response.status, body: JSON.parse(json) };
}

/** One 2026-07-28 tools/call; `meta` joins the request's `_meta`. */
export async function modernCall(
  gw: { mcpUrl: string; token: string },
  name: string,
  args: Record<string, unknown>,
  meta: Record<string, unknown> = {},
  options: ModernOptions = {},
) {
  return (await modernRequest(gw, 'tools/call', { name, arguments: args, _meta: meta }, options)).body;
}
