// Lab 4 (lecture sections 7 and 8): the MCP handshake, tools/list, the two kinds of errors,
// stdio, the Streamable HTTP session table, and the tools as a model sees them, with token
// counts — against the running gateway.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Stack } from '../embedded-stack.js';
import { renderTools, type ToolView, tokenReport } from '../tool-rendering.js';
import { table } from './table.js';

const VERSION = '2025-06-18';

export async function lab4(stack: Stack, print: (text: string) => void): Promise<void> {
  const base = {
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    ...(stack.mcpToken ? { authorization: `Bearer ${stack.mcpToken}` } : {}),
  };
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(stack.mcpUrl, { method: 'POST', headers: { ...base, ...headers }, body: JSON.stringify(body) });

  print('Demo 1: the handshake over Streamable HTTP\n');
  const init = await post({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'lab', version: '1' } },
  });
  const sessionId = init.headers.get('mcp-session-id') ?? '';
  const initResult = (
    (await init.json()) as { result: { protocolVersion: string; capabilities: unknown; serverInfo: { name: string } } }
  ).result;
  const session = { 'mcp-session-id': sessionId, 'mcp-protocol-version': VERSION };
  const initialized = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session);
  const list = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, session);
  const tools = ((await list.json()) as { result: { tools: ToolView[] } }).result.tools;
  print(
    table(
      ['step', 'HTTP', 'what came back'],
      [
        [
          '1 initialize (request)',
          init.status,
          `protocolVersion ${initResult.protocolVersion}, server ${initResult.serverInfo.name}, Mcp-Session-Id: ${sessionId.slice(0, 8)}... (${sessionId.length} chars)`,
        ],
        ['2 notifications/initialized', initialized.status, 'nothing: a notification gets no answer'],
        [
          '3 tools/list',
          list.status,
          `${tools.length} tools: ${tools
            .slice(0, 4)
            .map((t) => t.name)
            .join(', ')}, ...`,
        ],
      ],
    ),
  );

  print('\n\nDemo 2: the two kinds of errors\n');
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = (await (
      await post({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name, arguments: args } }, session)
    ).json()) as {
      result?: { isError: boolean; content: Array<{ text: string }> };
      error?: { code: number; message: string };
    };
    if (r.error) return `protocol error ${r.error.code}: ${r.error.message.split('\n').join(' ')}`;
    return `result, isError=${r.result?.isError}${r.result?.isError ? `: ${r.result.content[0]?.text.slice(0, 70)}...` : ''}`;
  };
  print(
    table(
      ['call', 'situation', `answer (revision ${VERSION})`],
      [
        ['office_days({"employee_id": "e-01"})', 'fine', await call('office_days', { employee_id: 'e-01' })],
        ['send_email({})', 'no such tool', await call('send_email', {})],
        ['office_days({})', 'a required argument missing', await call('office_days', {})],
        [
          'office_days({"employee_id": "Ed"})',
          'an argument in the wrong format',
          await call('office_days', { employee_id: 'Ed' }),
        ],
        [
          'office_days({"employee_id": "e-99"})',
          'valid, but no such employee',
          await call('office_days', { employee_id: 'e-99' }),
        ],
      ],
    ),
  );
  print('(from 2025-11-25 on, invalid arguments are an isError result too, so the model sees them)');

  print('\n\nDemo 3: the same server over stdio, one JSON message per line\n');
  const child = spawn(stack.stdio.command, [...stack.stdio.args], {
    env: { PATH: process.env.PATH ?? '', ...stack.stdio.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines = createInterface({ input: child.stdout });
  let stderrLines = 0;
  child.stderr.on('data', (c: Buffer) => {
    stderrLines += c.toString().split('\n').filter(Boolean).length;
  });
  const next = () => new Promise<string>((resolve) => lines.once('line', resolve));
  child.stdin.write(
    `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'lab', version: '1' } } })}\n`,
  );
  const stdioInit = await next();
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })}\n`);
  const stdioList = JSON.parse(await next()) as { result: { tools: unknown[] } };
  child.stdin.end();
  await new Promise((resolve) => child.once('exit', resolve));
  print(
    `stdout line 1: ${stdioInit.slice(0, 110)}...\nstdout line 2: tools/list with ${stdioList.result.tools.length} tools\nstderr: ${stderrLines} log line(s), never mixed into stdout; closing stdin ended the process`,
  );

  print('\n\nDemo 4: sessions over HTTP\n');
  const noSession = await post({ jsonrpc: '2.0', id: 4, method: 'tools/list' });
  const unknown = await post(
    { jsonrpc: '2.0', id: 5, method: 'tools/list' },
    { ...session, 'mcp-session-id': 'no-such-session-0000000000' },
  );
  const evil = await post(
    { jsonrpc: '2.0', id: 6, method: 'tools/list' },
    { ...session, origin: 'https://evil.example' },
  );
  const ended = await fetch(stack.mcpUrl, { method: 'DELETE', headers: { ...base, ...session } });
  const after = await post({ jsonrpc: '2.0', id: 7, method: 'tools/list' }, session);
  print(
    table(
      ['request', 'HTTP', 'why'],
      [
        ['tools/list without Mcp-Session-Id', noSession.status, 'a session is required after initialize'],
        [
          'tools/list with an unknown session id',
          unknown.status,
          'unknown session: the client should initialize again',
        ],
        ['tools/list with Origin: https://evil.example', evil.status, 'a web page from another site (DNS rebinding)'],
        ['DELETE the session', ended.status, 'the session is ended'],
        ['tools/list on the ended session', after.status, 'it is gone'],
      ],
    ),
  );

  print('\n\nDemo 5: what a model sees of the tools, and what it costs\n');
  print(renderTools(tools.slice(0, 4)));
  const tokens = tokenReport(tools);
  print(
    `\n${table(
      ['sent to the model each step', 'tokens (o200k_base)'],
      [
        [`the full tools/list JSON (${tokens.tools} tools)`, tokens.fullListTokens],
        ['names and descriptions only', tokens.namesAndDescriptionsTokens],
      ],
    )}\nA 20-step task sends the full list 20 times: ${tokens.fullListTokens * 20} tokens before any conversation.`,
  );
}
