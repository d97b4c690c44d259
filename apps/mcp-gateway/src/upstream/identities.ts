// Whom each upstream is called as: its own key, the signed-in user through an RFC 8693 token
// exchange (one exchanger for every upstream that exchanges, its token endpoint discovered from
// the issuer's metadata on first use), or the user's own token, connected in their browser (one
// ConnectFlow for every upstream that connects).

import { ConfigError } from '../common/config-error.js';
import type { ConnectFlow } from '../connect/flow.js';
import type { ExchangeSettings, UpstreamIdentity } from './caller.js';
import type { Upstream } from './config-file.js';

/** What an upstream's settings say of its identity (the environment's single upstream has no name). */
export type IdentityOwner = Pick<Upstream, 'url' | 'identity' | 'audience'> & { name: string | undefined };

/** Each upstream's identity; one token exchanger for all that call as the user. */
export async function identitiesOf(
  upstreams: readonly IdentityOwner[],
  settings: ExchangeSettings | undefined,
  connect?: ConnectFlow | undefined,
): Promise<Array<UpstreamIdentity | undefined>> {
  const connected = (u: IdentityOwner): UpstreamIdentity | undefined => {
    if (u.identity !== 'connect') return undefined;
    if (!connect || !u.name) {
      throw new ConfigError(
        `${u.name ?? 'the upstream'}: identity connect needs the gateway's connect settings and an upstream name (a config file's upstream)`,
      );
    }
    return { mode: 'connect', flow: connect, upstream: u.name };
  };
  const exchanging = upstreams.filter((u) => u.identity === 'exchange');
  if (exchanging.length === 0) return upstreams.map(connected);
  if (!settings) {
    const names = exchanging.map((u) => u.name ?? 'the upstream').join(', ');
    throw new ConfigError(
      `${names}: identity exchange calls the API as the signed-in user, which needs MCP_GATEWAY_AUTH=oauth with OAUTH_ISSUER, and OAUTH_EXCHANGE_CLIENT_SECRET: the secret of the gateway's client (OAUTH_EXCHANGE_CLIENT_ID, default agentwire-gateway) at the authorization server`,
    );
  }
  // Loaded only here: a gateway that never exchanges never loads jose.
  const { TokenExchanger, TokenVerifier } = await import('@agentwire/oauth');
  const discovery = new TokenVerifier({ issuer: settings.issuer });
  const exchanger = new TokenExchanger({
    clientId: settings.clientId,
    clientSecret: settings.clientSecret,
    tokenEndpoint: async () => {
      if (settings.tokenEndpoint) return settings.tokenEndpoint;
      const endpoint = (await discovery.issuerMetadata()).token_endpoint;
      if (!endpoint) throw new Error(`the metadata of ${settings.issuer} names no token_endpoint`);
      return endpoint;
    },
  });
  return upstreams.map((u) =>
    u.identity === 'exchange'
      ? { mode: 'exchange', exchanger, audience: u.audience ?? u.url, issuer: settings.issuer }
      : connected(u),
  );
}
