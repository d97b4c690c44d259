// Lab 4's stdio demos: the gateway as a child process, one JSON message per line on its stdout;
// what a log line on stdout does to a strict reader and to the official clients; two requests
// in flight at once, their answers matched by id; and the lecture's shutdown order.
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Stack } from '../embedded-stack.js';
import type { LabReport } from './lab-report.js';

export const oneLine = (text: string, max = 70) => {
  const flat = text.split('\n').join(' ');
  return flat.length > max ? `${flat.slice(0, max - 3)}...` : flat;
};

/** Demos 4 and 5: the same server over stdio, then with a log line on its stdout. */
export async function stdioFraming(stack: Stack, report: LabReport, version: string): Promise<void> {
  report.demo('the same server over stdio, one JSON message per line');
  const stdio = await listOverStdio(stack, version, []);
  report.wire(
    [
      `stdout line 1: ${oneLine(stdio.lines[0] ?? '', 64)}`,
      `stdout line 2: tools/list with ${stdio.tools} tools`,
      `stderr: ${stdio.stderrLines} log line(s), never mixed into stdout`,
    ].join('\n'),
  );
  report.note(
    stdio.exit.by === 'stdin closed'
      ? `Shutting down: the client closed stdin and the gateway exited on its own, code ${stdio.exit.code}, ${stdio.exit.ms} ms later; no SIGTERM was needed (that comes only after a grace period, then SIGKILL).`
      : `Shutting down: the gateway did not exit when stdin closed; it took ${stdio.exit.by}, ${stdio.exit.ms} ms after.`,
  );

  report.demo('a log line on stdout (mcp-gateway --stdio --demo-log-to-stdout)');
  const broken = await listOverStdio(stack, version, ['--demo-log-to-stdout']);
  const strict = (() => {
    for (const [i, line] of broken.lines.entries()) {
      try {
        JSON.parse(line);
      } catch (error) {
        return `failed at line ${i + 1}: ${oneLine((error as Error).message, 50)}`;
      }
    }
    return 'read every line';
  })();
  const v1 = await officialClient('v1', stack, ['--demo-log-to-stdout']);
  const v2 = await officialClient('v2', stack, ['--demo-log-to-stdout']);
  report.table(
    ['client', 'what it did', 'tools'],
    [
      ['a strict reader (every line is JSON-RPC)', strict, null],
      [
        'official SDK v1',
        v1.errors.length > 0
          ? `reported ${v1.errors.length} bad lines (${oneLine(v1.errors[0] ?? '', 40)}), went on`
          : 'noticed nothing',
        v1.tools,
      ],
      [
        'official SDK v2',
        v2.errors.length > 0
          ? `reported ${v2.errors.length} bad lines, went on`
          : 'skipped the bad lines without a word',
        v2.tools,
      ],
    ],
  );
  report.note(
    `stdout line 1 is now '${broken.lines[0]}'. Over stdio, stdout is the protocol: the spec says a server MUST NOT write anything else to it, and logs go to stderr. Tolerant clients hide the mistake; a strict one, or one that meets a line cut in half, fails.`,
  );
}

const ordinal = (n: number) => ['first', 'second', 'third'][n - 1] ?? `#${n}`;

/** Demo 8: a slow call and a quick one written back to back; the quick one is answered first. */
export async function stdioOutOfOrder(stack: Stack, report: LabReport, version: string): Promise<void> {
  report.demo('two requests at once over stdio: replies matched by id');
  const gateway = StdioGateway.start(stack, [], 'ignore');
  await gateway.initialize(version);
  const started = performance.now();
  const requests: Array<[number, string, string, Record<string, unknown>]> = [
    [2, 'tools/call slow({"ms": 1000})', 'slow', { ms: 1000 }],
    [3, 'tools/call health()', 'health', {}],
  ];
  for (const [id, , name, args] of requests)
    gateway.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
  await gateway.answersTo([2, 3]);
  await gateway.close();
  // Answers after the handshake, in the order they came.
  const later = gateway.answers.filter((a) => a.id === 2 || a.id === 3);
  report.table(
    ['sent', 'id', 'request', 'answered'],
    requests.map(([id, request], i) => {
      const arrived = later.findIndex((a) => a.id === id);
      const ms = Math.round((later[arrived]?.at ?? started) - started);
      return [i + 1, id, request, `${ordinal(arrived + 1)}, after ${ms} ms`];
    }),
  );
  report.note(
    'Both requests were written before either answer came. The quick one is answered first; the client pairs each answer with its request by id, not by order.',
  );
}

/** Spawns the gateway over stdio, initializes, lists the tools, closes stdin; every stdout line kept. */
async function listOverStdio(stack: Stack, version: string, flags: string[]) {
  const gateway = StdioGateway.start(stack, flags, 'pipe');
  await gateway.initialize(version);
  gateway.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
  const [listed] = await gateway.answersTo([2]);
  const exit = await gateway.close();
  const tools = (listed?.message as { result?: { tools?: unknown[] } } | undefined)?.result?.tools;
  return { lines: gateway.lines, tools: tools?.length ?? 0, stderrLines: gateway.stderrLines, exit };
}

interface Answer {
  id: unknown;
  message: unknown;
  /** performance.now() when its line arrived. */
  at: number;
}

/** The gateway as a child process spoken to over stdio: every stdout line kept, JSON ones parsed. */
class StdioGateway {
  readonly lines: string[] = [];
  readonly answers: Answer[] = [];
  stderrLines = 0;
  #wake: (() => void) | undefined;

  private constructor(readonly child: ChildProcess) {
    if (!child.stdout) throw new Error('the stdio gateway has no stdout pipe');
    createInterface({ input: child.stdout }).on('line', (line) => {
      this.lines.push(line);
      try {
        const message = JSON.parse(line) as { id?: unknown };
        this.answers.push({ id: message.id, message, at: performance.now() });
      } catch {
        // A line that is not JSON: kept in `lines`, which is what demo 5 shows.
      }
      this.#wake?.();
    });
    child.stderr?.on('data', (c: Buffer) => {
      this.stderrLines += c.toString().split('\n').filter(Boolean).length;
    });
    // An early exit ends every wait.
    child.once('exit', () => this.#wake?.());
  }

  static start(stack: Stack, flags: string[], stderr: 'pipe' | 'ignore'): StdioGateway {
    const child = spawn(stack.stdio.command, [...stack.stdio.args, ...flags], {
      env: { PATH: process.env.PATH ?? '', ...stack.stdio.env },
      stdio: ['pipe', 'pipe', stderr],
    });
    return new StdioGateway(child);
  }

  send(message: unknown): void {
    this.child.stdin?.write(`${JSON.stringify(message)}\n`);
  }

  /** initialize, its answer, then notifications/initialized. */
  async initialize(version: string): Promise<void> {
    this.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'lab', version: '1' } },
    });
    await this.answersTo([1]);
    this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }

  /** Waits until every id has its answer (or the child has exited); the answers in `ids` order. */
  async answersTo(ids: unknown[]): Promise<Array<Answer | undefined>> {
    const found = () => ids.map((id) => this.answers.find((a) => a.id === id));
    while (found().includes(undefined) && this.child.exitCode === null)
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    return found();
  }

  close(): Promise<{ ms: number; code: number | null; by: string }> {
    return closeStdin(this.child);
  }
}

/**
 * The lecture's shutdown order for a stdio server: close its stdin and let it end on its own;
 * SIGTERM only if it has not after a grace period, SIGKILL after another.
 */
async function closeStdin(
  child: ChildProcess,
  graceMs = 2000,
): Promise<{ ms: number; code: number | null; by: string }> {
  const started = performance.now();
  const exited = new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
  child.stdin?.end();
  let by = 'stdin closed';
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    const code = await Promise.race([exited, new Promise<'late'>((r) => setTimeout(r, graceMs, 'late').unref())]);
    if (code !== 'late') return { ms: Math.round(performance.now() - started), code, by };
    by = signal;
    child.kill(signal);
  }
  return { ms: Math.round(performance.now() - started), code: await exited, by };
}

/** Connects an official SDK client to the gateway over stdio and lists the tools, keeping what it reports. */
async function officialClient(
  sdk: 'v1' | 'v2',
  stack: Stack,
  flags: string[],
): Promise<{ errors: string[]; tools: number | null }> {
  const params = {
    command: stack.stdio.command,
    args: [...stack.stdio.args, ...flags],
    env: { PATH: process.env.PATH ?? '', ...stack.stdio.env },
    stderr: 'pipe' as const,
  };
  const errors: string[] = [];
  const client =
    sdk === 'v1' ? new ClientV1({ name: 'lab', version: '1' }) : new ClientV2({ name: 'lab', version: '1' });
  client.onerror = (error: Error) => errors.push(String(error));
  try {
    await client.connect(sdk === 'v1' ? new StdioV1(params) : new StdioV2(params));
    return { errors, tools: (await client.listTools()).tools.length };
  } catch (error) {
    errors.push(String(error));
    return { errors, tools: null };
  } finally {
    await client.close();
  }
}
