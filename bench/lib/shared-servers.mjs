// Servers and sessions that several comparisons measure against, each started once per run:
// the bare Fastify route with the toy API's own JSON (1, 6), the gateway with a session (2, 3,
// 5), the Fastify + undici passthrough (2, 5), and an MCP session on any gateway (7 too).
import { writeFileSync } from 'node:fs';

export const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** The call every MCP comparison makes: a small answer, so the servers' own work shows. */
export const callBody = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'office_days', arguments: { employee_id: 'e-05' } },
});

/** A bare Fastify route that returns exactly what the toy API's `GET /emails` returns. */
export function bareEmails(runner) {
  return runner.once('bare', async () => {
    const auth = { authorization: `Bearer ${runner.key}` };
    const emails = await runner.http(`${runner.api.line}/emails`, { headers: auth });
    if (emails.status !== 200) throw new Error(`GET /emails answered ${emails.status}`);
    const file = runner.tmpFile('emails');
    writeFileSync(file, emails.text);
    const bare = await runner.server('servers/bare-json.mjs', [file]);
    const same = await runner.http(`${bare.line}/emails`);
    if (JSON.stringify(JSON.parse(same.text)) !== JSON.stringify(JSON.parse(emails.text))) {
      throw new Error('the bare route does not return the same JSON');
    }
    return bare;
  });
}

/** The runner surface the helpers here use (its token and `http`), over fetch: for a script outside run.mjs. */
export function fetchRunner(token) {
  return {
    token,
    async http(url, init) {
      const response = await fetch(url, init);
      return { status: response.status, headers: Object.fromEntries(response.headers), text: await response.text() };
    },
  };
}

/** Initializes a 2025-11-25 session on a gateway; resolves with its id. */
export async function gatewaySession(runner, url) {
  const init = await runner.http(url, {
    method: 'POST',
    headers: { ...mcpHeaders, authorization: `Bearer ${runner.token}` },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
    }),
  });
  const sessionId = init.headers['mcp-session-id'];
  if (init.status !== 200 || !sessionId)
    throw new Error(`initialize answered ${init.status}: ${init.text.slice(0, 200)}`);
  await runner.http(url, {
    method: 'POST',
    headers: sessionHeaders(runner, sessionId),
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  return sessionId;
}

export function sessionHeaders(runner, sessionId) {
  return {
    ...mcpHeaders,
    authorization: `Bearer ${runner.token}`,
    'mcp-session-id': sessionId,
    'mcp-protocol-version': '2025-11-25',
  };
}

/** Our gateway over Streamable HTTP, with one session for the calls. */
export function gatewayWithSession(runner) {
  return runner.once('gateway', async () => {
    const gateway = await runner.server('servers/gateway-http.mjs', [runner.api.line, runner.key, runner.token]);
    const sessionId = await gatewaySession(runner, gateway.line);
    const headers = sessionHeaders(runner, sessionId);
    // It must really answer the call before it is measured, whichever comparison comes first.
    const r = await runner.http(gateway.line, { method: 'POST', headers, body: callBody });
    if (r.status !== 200 || !r.text.includes('mon') || r.text.includes('"isError":true')) {
      throw new Error(`the gateway did not answer tools/call properly: ${r.status} ${r.text.slice(0, 300)}`);
    }
    return { url: gateway.line, sessionId, headers, pid: gateway.pid };
  });
}

/** One hop and nothing else: the floor for any gateway. */
export function passthrough(runner) {
  return runner.once('passthrough', () => runner.server('servers/passthrough.mjs', [runner.api.line, runner.key]));
}
