// Lab 4 (lecture sections 7 and 8): the MCP handshake, tools/list, the refusals at each layer
// (HTTP, JSON-RPC, the tool), the two kinds of tool errors and how they changed between
// revisions, stdio (lab4-stdio.ts: framing, a log line on stdout, answers out of order), the
// Streamable HTTP session table, the tools as a model sees them, with token counts, and a
// 2026-07-28 call beside the handshake it no longer needs, against the running gateway.
import { request as httpRequest } from 'node:http';
import type { Stack } from '../embedded-stack.js';
import { wrapText } from '../text-table.js';
import { renderTools, type ToolView, tokenReport } from '../tool-rendering.js';
import { type LabReport, TERMINAL_WIDTH } from './lab-report.js';
import { oneLine, stdioFraming, stdioOutOfOrder } from './lab4-stdio.js';

/** The revisions that open with initialize, which the lab's handshake uses. */
export const LAB4_VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];
const DEFAULT_VERSION = '2025-06-18';

interface JsonRpcAnswer {
  result?: Record<string, unknown> & { isError?: boolean; content?: Array<{ text: string }> };
  error?: { code: number; message: string };
}

export async function lab4(stack: Stack, report: LabReport, version = DEFAULT_VERSION): Promise<void> {
  const base = {
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    ...(stack.mcpToken ? { authorization: `Bearer ${stack.mcpToken}` } : {}),
  };
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(stack.mcpUrl, {
      method: 'POST',
      headers: { ...base, ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    }).catch((error: Error & { cause?: { code?: string; message?: string } }) => {
      throw new Error(
        `cannot reach the MCP gateway at ${stack.mcpUrl}: ${error.cause?.code ?? error.cause?.message ?? error.message}`,
      );
    });
  const initialize = (protocolVersion: string, headers: Record<string, string> = {}) =>
    post(
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion, capabilities: {}, clientInfo: { name: 'lab', version: '1' } },
      },
      headers,
    );

  report.demo(`the handshake over Streamable HTTP (revision ${version})`);
  const init = await initialize(version);
  const sessionId = init.headers.get('mcp-session-id') ?? '';
  const initText = await init.text();
  const initResult = (() => {
    try {
      return (JSON.parse(initText) as { result?: { protocolVersion: string; serverInfo: { name: string } } }).result;
    } catch {
      return undefined;
    }
  })();
  if (!initResult) {
    // Not a gateway, the wrong token, a proxy's error page: say what came back, not a TypeError.
    throw new Error(
      `the server at ${stack.mcpUrl} did not accept initialize: HTTP ${init.status} ${oneLine(initText || '(no body)', 160)}`,
    );
  }
  const session = { 'mcp-session-id': sessionId, 'mcp-protocol-version': version };
  const initialized = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session);
  const list = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, session);
  const tools = ((await list.json()) as { result: { tools: ToolView[] } }).result.tools;
  report.table(
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
  );

  report.wire(
    [
      '-> initialize, the params the client sent:',
      JSON.stringify(
        { protocolVersion: version, capabilities: {}, clientInfo: { name: 'lab', version: '1' } },
        null,
        2,
      ),
      '<- the result (instructions cut short):',
      JSON.stringify({ ...initResult, ...('instructions' in initResult ? { instructions: '...' } : {}) }, null, 2),
    ].join('\n'),
  );
  report.note(
    'Capabilities are what each side offers: this server has tools (and says when the list changes) and logging; this client offered none, so the server will not ask it anything (no elicitation, no sampling).',
  );

  report.demo('refused at each layer: HTTP, JSON-RPC, the handshake');
  const rpc = async (response: Response) => {
    const text = await response.text();
    try {
      const answer = JSON.parse(text) as JsonRpcAnswer;
      if (answer.error) return `${answer.error.code} ${oneLine(answer.error.message, 90)}`;
      return `result, protocolVersion ${String(answer.result?.protocolVersion ?? '-')}`;
    } catch {
      return text ? oneLine(text, 50) : '(no body)';
    }
  };
  const refusals: Array<[string, () => Promise<Response>]> = [
    [
      'tools/list without the bearer token',
      () => fetch(stack.mcpUrl, { method: 'POST', headers: { ...base, ...session, authorization: '' }, body: '{}' }),
    ],
    [
      'Accept: text/html',
      () => post({ jsonrpc: '2.0', id: 3, method: 'tools/list' }, { ...session, accept: 'text/html' }),
    ],
    [
      'MCP-Protocol-Version: 1999-01-01',
      () => post({ jsonrpc: '2.0', id: 4, method: 'tools/list' }, { ...session, 'mcp-protocol-version': '1999-01-01' }),
    ],
    ['a body that is not JSON', () => post('{"jsonrpc": "2.0", "id": 5, "method": ', session)],
    ['method tools/lists (a typo)', () => post({ jsonrpc: '2.0', id: 6, method: 'tools/lists' }, session)],
    ['initialize asking for 2099-01-01', () => initialize('2099-01-01')],
  ];
  const refusalRows: Array<Array<string | number>> = [];
  for (const [label, send] of refusals) {
    const response = await send();
    refusalRows.push([label, response.status, await rpc(response)]);
  }
  report.table(['request', 'HTTP', 'JSON-RPC answer'], refusalRows);
  report.note(
    '401, 406 and 400 are the transport refusing before any JSON-RPC is read; -32700 (parse error) and -32601 (method not found) are JSON-RPC; a version the server does not speak is answered with the newest one it speaks that has a handshake (2026-07-28 has none), and the client decides whether to go on.',
  );

  report.demo(`the two kinds of tool errors (revision ${version})`);
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = (await (
      await post({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args } }, session)
    ).json()) as JsonRpcAnswer;
    if (r.error) return `protocol error ${r.error.code}: ${oneLine(r.error.message, 110)}`;
    const text = r.result?.content?.[0]?.text ?? '';
    return `result, isError=${r.result?.isError === true}${r.result?.isError ? `: ${oneLine(text, 110)}` : ''}`;
  };
  report.table(
    ['call', 'situation', 'answer'],
    [
      ['read_document({"doc_id": "doc-001"})', 'fine', await call('read_document', { doc_id: 'doc-001' })],
      ['send_email({})', 'no such tool', await call('send_email', {})],
      ['read_document({})', 'a required argument missing', await call('read_document', {})],
      [
        'read_document({"doc_id": "handbook"})',
        'an argument in the wrong format',
        await call('read_document', { doc_id: 'handbook' }),
      ],
      [
        'read_document({"doc_id": "doc-404"})',
        'valid, but no such document',
        await call('read_document', { doc_id: 'doc-404' }),
      ],
    ],
  );
  report.note(
    "An unknown tool is -32602 here (invalid params: tools/call exists, its name is what is wrong), the code the spec's own example uses, though the spec does not require one; the lecture uses -32601, which JSON-RPC defines for an unknown method. Up to 2025-06-18 invalid arguments are a protocol error too; from 2025-11-25 on they are an isError result, so the model reads them and can fix its call. Try --protocol-version 2025-11-25.",
  );

  await stdioFraming(stack, report, version);

  report.demo('sessions over HTTP');
  const noSession = await post({ jsonrpc: '2.0', id: 8, method: 'tools/list' });
  const unknown = await post(
    { jsonrpc: '2.0', id: 9, method: 'tools/list' },
    { ...session, 'mcp-session-id': 'no-such-session-0000000000' },
  );
  const evil = await post(
    { jsonrpc: '2.0', id: 10, method: 'tools/list' },
    { ...session, origin: 'https://evil.example' },
  );
  // fetch will not set Host; node:http will, as a browser does for a name rebound to 127.0.0.1.
  const rebound = await new Promise<number>((resolve, reject) => {
    const request = httpRequest(
      stack.mcpUrl,
      { method: 'POST', headers: { ...base, ...session, host: 'evil.example' } },
      (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify({ jsonrpc: '2.0', id: 12, method: 'tools/list' }));
  });
  const getWithout = await fetch(stack.mcpUrl, { headers: { ...base, accept: 'text/event-stream' } });
  await getWithout.body?.cancel();
  // With the session, GET opens a stream for messages the server starts; read its headers, then leave.
  const leave = new AbortController();
  const getWith = await fetch(stack.mcpUrl, {
    headers: { ...base, ...session, accept: 'text/event-stream' },
    signal: leave.signal,
  });
  const streamType = getWith.headers.get('content-type') ?? '-';
  leave.abort();
  const ended = await fetch(stack.mcpUrl, { method: 'DELETE', headers: { ...base, ...session } });
  const after = await post({ jsonrpc: '2.0', id: 11, method: 'tools/list' }, session);
  report.table(
    ['request', 'HTTP', 'why'],
    [
      ['tools/list without Mcp-Session-Id', noSession.status, 'a session is required after initialize'],
      ['tools/list with an unknown session id', unknown.status, 'unknown session: initialize again'],
      ['tools/list with Origin: https://evil.example', evil.status, 'a page on another site: the Origin check'],
      ['tools/list with Host: evil.example', rebound, 'a name rebound to 127.0.0.1: the Host check'],
      [
        'GET /mcp without a session',
        getWithout.status,
        `nothing to listen to (Allow: ${getWithout.headers.get('allow') ?? '-'})`,
      ],
      ['GET /mcp with the session', getWith.status, `${streamType}: the server may send on it`],
      ['DELETE the session', ended.status, 'the session is ended'],
      ['tools/list on the ended session', after.status, 'it is gone'],
    ],
  );

  report.demo('what a model sees of the tools, and what it costs');
  report.wire(
    `${renderTools(tools.slice(0, 4))
      .split('\n')
      .flatMap((line) =>
        line.startsWith('    ') ? wrapText(line.trim(), TERMINAL_WIDTH - 4).map((l) => `    ${l}`) : [line],
      )
      .join('\n')}\n`,
  );
  const tokens = tokenReport(tools);
  report.table(
    ['sent to the model each step', 'tokens (o200k_base)'],
    [
      [`the full tools/list JSON (${tokens.tools} tools)`, tokens.fullListTokens],
      ['names and descriptions only', tokens.namesAndDescriptionsTokens],
    ],
  );
  report.note(
    `A 20-step task sends the full list 20 times: ${tokens.fullListTokens * 20} tokens before any conversation.`,
  );

  await stdioOutOfOrder(stack, report, version);

  report.demo('revision 2026-07-28: one request, no handshake, no session');
  // The same call the 2025-11-25 way, counted: initialize, initialized, then the call.
  const classic = await initialize('2025-11-25');
  await classic.body?.cancel();
  const classicSession = {
    'mcp-session-id': classic.headers.get('mcp-session-id') ?? '',
    'mcp-protocol-version': '2025-11-25',
  };
  const classicPosts = [
    classic,
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, classicSession),
    await post(
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'office_days', arguments: { employee_id: 'e-05' } },
      },
      classicSession,
    ),
  ];
  for (const r of classicPosts.slice(1)) await r.body?.cancel();
  const modern = await modernCall(stack, post);
  report.wire(modern.wire);
  report.table(
    ['revision', 'POSTs to one tool result', 'Mcp-Session-Id', 'the version travels in'],
    [
      [
        '2025-11-25',
        classicPosts.length,
        classicSession['mcp-session-id'] ? 'yes' : 'none',
        'initialize, then a header',
      ],
      ['2026-07-28', modern.posts, modern.sessionId ?? 'none', 'every request'],
    ],
  );
  report.note(
    `Answered HTTP ${modern.status}: ${modern.outcome}. From 2026-07-28 there is no initialize and no Mcp-Session-Id: each request names its revision (the MCP-Protocol-Version header and _meta) and its client's capabilities, so any replica can answer it. The gateway speaks both; agent call speaks 2026-07-28 over HTTP (--via mcp-http) and opens with initialize over stdio.`,
  );
}

/** One tools/call as revision 2026-07-28 sends it: no initialize first, no session. */
async function modernCall(
  stack: Stack,
  post: (body: unknown, headers?: Record<string, string>) => Promise<Response>,
): Promise<{ wire: string; posts: number; sessionId: string | undefined; status: number; outcome: string }> {
  const headers = {
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/call',
    'mcp-name': 'office_days',
  };
  const body = {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name: 'office_days',
      arguments: { employee_id: 'e-05' },
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  };
  const response = await post(body, headers);
  const answer = (await response.json()) as JsonRpcAnswer;
  const text = answer.result?.content?.[0]?.text ?? answer.error?.message ?? '';
  return {
    wire: [
      `POST ${new URL(stack.mcpUrl).pathname}`,
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
      ...(stack.mcpToken ? ['authorization: Bearer [redacted]'] : []),
      '',
      JSON.stringify(body, null, 2),
    ].join('\n'),
    posts: 1,
    sessionId: response.headers.get('mcp-session-id') ?? undefined,
    status: response.status,
    outcome: answer.error
      ? `error ${answer.error.code} ${oneLine(text, 60)}`
      : `a tool result (isError: ${answer.result?.isError === true})`,
  };
}
