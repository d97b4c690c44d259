// The request comparisons 5 and 17 time: office_days, straight to the API route ("api") or as a
// tools/call through a gateway with an established session ("gateway"); undici request options.
const callBody = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'office_days', arguments: { employee_id: 'e-05' } },
});

export function officeDaysRequest(input, url) {
  if (input.mode === 'api') {
    return { path: '/employees/e-05/office-days', method: 'GET', headers: { authorization: `Bearer ${input.key}` } };
  }
  return {
    path: url.pathname,
    method: 'POST',
    headers: {
      authorization: `Bearer ${input.token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': input.sessionId,
      'mcp-protocol-version': '2025-11-25',
    },
    body: callBody,
  };
}
