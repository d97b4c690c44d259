// 14. What calling the API as the user costs: two OAuth gateways serving the same signed-in demo
// user, tools/call `office_days` in a session; one calls the API with its own key (identity:
// service), the other with a token the authorization server minted for this user in exchange
// (identity: exchange, RFC 8693), taken from the gateway's cache after the first call. Measured
// as the gateway's own CPU per call (from /proc, a fixed number of calls, 16 in flight), with
// the throughput beside it. Goal: at most 10% more.

import { randomBytes } from 'node:crypto';
import { signInDemoUser } from '@agentwire/auth-server';
import { callBody, gatewaySession, sessionHeaders } from '../lib/shared-servers.mjs';
import { cpuPerCall, median } from '../lib/util.mjs';

export const ids = [14];

const RESOURCE = 'http://gateway.bench.internal/mcp';
const API = 'http://api.bench.internal';

export async function run(runner) {
  const calls = runner.settings.quick ? 2000 : 6000;
  const secret = randomBytes(16).toString('hex');
  const auth = await runner.server('servers/auth-server.mjs', [RESOURCE, secret, API]);
  const api = await runner.server('servers/toy-api.mjs', [runner.key], {
    env: { OAUTH_ISSUER: auth.line, OAUTH_RESOURCE: API },
  });
  const user = await signInDemoUser({
    issuer: auth.line,
    user: 'ada',
    password: secret,
    scope: 'emails:read digest:read replies:write',
    resource: RESOURCE,
  });
  const oauth = { MCP_GATEWAY_AUTH: 'oauth', OAUTH_ISSUER: auth.line, OAUTH_RESOURCE: RESOURCE };
  const service = await runner.server('servers/gateway-http.mjs', [api.line, runner.key, runner.token], { env: oauth });
  const exchange = await runner.server('servers/gateway-http.mjs', [api.line, runner.key, runner.token], {
    env: {
      ...oauth,
      UPSTREAM_IDENTITY: 'exchange',
      UPSTREAM_AUDIENCE: API,
      OAUTH_EXCHANGE_CLIENT_SECRET: secret,
    },
  });
  const userRunner = { ...runner, token: user.accessToken };
  const serviceHeaders = sessionHeaders(userRunner, await gatewaySession(userRunner, service.line));
  const exchangeHeaders = sessionHeaders(userRunner, await gatewaySession(userRunner, exchange.line));
  // Both sides answer the call, and the exchange side really called as the user.
  for (const [line, headers, identity] of [
    [service.line, serviceHeaders, 'service'],
    [exchange.line, exchangeHeaders, 'exchange'],
  ]) {
    // Asked for the upstream report, which says whom the call was made as (the measured calls do not ask).
    const asked = JSON.parse(callBody);
    asked.params._meta = { 'agentwire.dev/upstream': true };
    const answer = await runner.http(line, { method: 'POST', headers, body: JSON.stringify(asked) });
    if (!answer.text.includes(`"identity":"${identity}"`) || answer.text.includes('"isError":true')) {
      throw new Error(`the ${identity} gateway's call failed: ${answer.text.slice(0, 300)}`);
    }
  }

  const sides = {
    service: {
      pid: service.pid,
      send: () => runner.http(service.line, { method: 'POST', headers: serviceHeaders, body: callBody }),
    },
    exchange: {
      pid: exchange.pid,
      send: () => runner.http(exchange.line, { method: 'POST', headers: exchangeHeaders, body: callBody }),
    },
  };
  console.log(
    `14. the API called as the user (token exchange, cached) vs its key: own CPU per tools/call, ${calls} calls a round`,
  );
  for (const side of Object.values(sides)) await cpuPerCall(side.pid, 500, side.send);
  const s = await runner.interleave(
    Object.fromEntries(
      Object.entries(sides).map(([name, side]) => [name, () => cpuPerCall(side.pid, calls, side.send)]),
    ),
  );
  const cpu = (name) => median(s[name].map((x) => x.cpuUs));
  const rps = (name) => median(s[name].map((x) => x.rps));
  const ratio = cpu('exchange') / cpu('service');
  runner.row({
    id: 14,
    comparison:
      'OAuth gateway `tools/call` calling the API as the user (RFC 8693 token exchange, the token cached), own CPU per call vs with the service key',
    ours: `${Math.round(cpu('exchange'))} µs (${Math.round(rps('exchange'))}/s)`,
    baseline: `${Math.round(cpu('service'))} µs (${Math.round(rps('service'))}/s)`,
    measure: `${ratio.toFixed(2)}x`,
    goal: '<= 1.10x',
    met: ratio <= 1.1,
  });
}
