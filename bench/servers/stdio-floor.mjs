// The floor for any MCP server over stdio (comparison 4): read a line, make the one upstream
// request with undici, write a line. It answers initialize and tools/call for office_days and
// nothing else: no validation, no sessions, no retries, no _meta. What a stdio server cannot
// avoid is here (two pipe reads and writes a call, the JSON, the upstream request), so the
// gateway's CPU beyond it is its own work. Upstream from UPSTREAM_URL and UPSTREAM_API_KEY.
// The gateway's V8 settings (apps/mcp-gateway/src/runtime-flags.ts), so the two differ only in their code.
import '@agentwire/mcp-gateway/runtime-flags';
import { createInterface } from 'node:readline';
import { request } from 'undici';

const upstream = process.env.UPSTREAM_URL;
const headers = { authorization: `Bearer ${process.env.UPSTREAM_API_KEY}` };
const write = (id, result) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id, result })}\n`);

createInterface({ input: process.stdin }).on('line', async (line) => {
  const { id, method, params } = JSON.parse(line);
  if (id === undefined) return; // a notification
  if (method === 'initialize') {
    write(id, {
      protocolVersion: params.protocolVersion,
      capabilities: { tools: {} },
      serverInfo: { name: 'floor', version: '1' },
    });
    return;
  }
  const employee = encodeURIComponent(params.arguments.employee_id);
  const { statusCode, body } = await request(`${upstream}/employees/${employee}/office-days`, { headers });
  const text = await body.text();
  write(id, { content: [{ type: 'text', text }], isError: statusCode >= 400 });
});
// Stopped by its client with SIGTERM: exit normally, so that `node --cpu-prof` writes its profile.
process.once('SIGTERM', () => process.exit(0));
