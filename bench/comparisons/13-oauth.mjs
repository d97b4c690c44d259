// 13. What checking access tokens costs: the gateway with MCP_GATEWAY_AUTH=oauth (every request's
// JWT verified: ES256 signature against the cached JWKS, iss, aud, exp) against the same gateway
// with the static token (a SHA-256 and a constant-time compare), each serving tools/call
// `office_days` in a session; and the JWT side again with JWT_CACHE_MS=0, every request's
// signature checked anew (what the cache of verified tokens saves). Measured as the gateway's own CPU per call (from /proc, a fixed
// number of calls, 16 in flight), with the throughput beside it. Goal: at most 10% more.

import { randomBytes } from 'node:crypto';
import { callBody, gatewaySession, mcpHeaders, sessionHeaders } from '../lib/shared-servers.mjs';
import { cpuPerCall, median } from '../lib/util.mjs';

export const ids = [13];

const RESOURCE = 'http://gateway.bench.internal/mcp';

export async function run(runner) {
  const calls = runner.settings.quick ? 2000 : 6000;
  const secret = randomBytes(16).toString('hex');
  const auth = await runner.server('servers/auth-server.mjs', [RESOURCE, secret]);
  const tokenAnswer = await runner.http(`${auth.line}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`agentwire-scripts:${secret}`).toString('base64')}`,
    },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      resource: RESOURCE,
      scope: 'emails:read',
    }).toString(),
  });
  const jwt = JSON.parse(tokenAnswer.text).access_token;
  if (!jwt) throw new Error(`no token from the authorization server: ${tokenAnswer.text.slice(0, 200)}`);

  const staticGateway = await runner.server('servers/gateway-http.mjs', [runner.api.line, runner.key, runner.token]);
  const staticHeaders = sessionHeaders(runner, await gatewaySession(runner, staticGateway.line));
  const oauthGateway = await runner.server('servers/gateway-http.mjs', [runner.api.line, runner.key, runner.token], {
    env: { MCP_GATEWAY_AUTH: 'oauth', OAUTH_ISSUER: auth.line, OAUTH_RESOURCE: RESOURCE },
  });
  const uncachedGateway = await runner.server('servers/gateway-http.mjs', [runner.api.line, runner.key, runner.token], {
    env: { MCP_GATEWAY_AUTH: 'oauth', OAUTH_ISSUER: auth.line, OAUTH_RESOURCE: RESOURCE, JWT_CACHE_MS: '0' },
  });
  // The same session handshake, with the JWT instead of the token.
  const jwtRunner = { ...runner, token: jwt };
  const oauthHeaders = sessionHeaders(jwtRunner, await gatewaySession(jwtRunner, oauthGateway.line));
  const uncachedHeaders = sessionHeaders(jwtRunner, await gatewaySession(jwtRunner, uncachedGateway.line));
  if (oauthHeaders.authorization === staticHeaders.authorization)
    throw new Error('both sides send the same credentials');
  const refused = await runner.http(oauthGateway.line, {
    method: 'POST',
    headers: { ...mcpHeaders, authorization: `Bearer ${runner.token}` },
    body: callBody,
  });
  if (refused.status !== 401) throw new Error(`the OAuth gateway took the static token (${refused.status})`);

  const sides = {
    static: {
      pid: staticGateway.pid,
      send: () => runner.http(staticGateway.line, { method: 'POST', headers: staticHeaders, body: callBody }),
    },
    jwt: {
      pid: oauthGateway.pid,
      send: () => runner.http(oauthGateway.line, { method: 'POST', headers: oauthHeaders, body: callBody }),
    },
    uncached: {
      pid: uncachedGateway.pid,
      send: () => runner.http(uncachedGateway.line, { method: 'POST', headers: uncachedHeaders, body: callBody }),
    },
  };
  console.log(`13. JWT access tokens vs the static token: own CPU per tools/call, ${calls} calls a round`);
  for (const side of Object.values(sides)) await cpuPerCall(side.pid, 500, side.send);
  const s = await runner.interleave(
    Object.fromEntries(
      Object.entries(sides).map(([name, side]) => [name, () => cpuPerCall(side.pid, calls, side.send)]),
    ),
  );
  const cpu = (name) => median(s[name].map((x) => x.cpuUs));
  const rps = (name) => median(s[name].map((x) => x.rps));
  const ratio = cpu('jwt') / cpu('static');
  runner.row({
    id: 13,
    comparison:
      'gateway `tools/call` with a JWT (ES256; its signature checked once, then from the cache of verified tokens), own CPU per call vs the static token',
    ours: `${Math.round(cpu('jwt'))} µs (${Math.round(rps('jwt'))}/s)`,
    baseline: `${Math.round(cpu('static'))} µs (${Math.round(rps('static'))}/s)`,
    measure: `${ratio.toFixed(2)}x`,
    goal: '<= 1.10x',
    met: ratio <= 1.1,
  });
  const uncached = cpu('uncached') / cpu('static');
  runner.row({
    id: 13,
    comparison: 'the same with JWT_CACHE_MS=0 (every signature checked anew), own CPU per call vs the static token',
    ours: `${Math.round(cpu('uncached'))} µs (${Math.round(rps('uncached'))}/s)`,
    baseline: `${Math.round(cpu('static'))} µs (${Math.round(rps('static'))}/s)`,
    measure: `${uncached.toFixed(2)}x`,
    goal: 'none: what the cache saves',
    met: null,
  });
}
