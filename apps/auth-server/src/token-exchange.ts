// RFC 8693 token exchange, for the gateway: it hands in a user's access token (issued here for
// the gateway) and gets one for an API, for the same user, with no more scopes than the user's
// token grants, the API accepts and the user's role allows. oidc-provider does the client
// authentication and signs the token; this grant decides what may be exchanged for what.
//   POST /token  grant_type=urn:ietf:params:oauth:grant-type:token-exchange
//                subject_token=<the user's token>  subject_token_type=...:access_token
//                resource=<the API> (or audience=)  scope=<what the tool needs> (optional)
// The new token names the gateway as the actor (`act`, RFC 8693 §4.1): the API can tell a
// user acting directly from one acting through the gateway.
import { createLocalJWKSet, type JWK, errors as joseErrors, jwtVerify } from 'jose';
import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { findUser } from './users.js';

export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
/** The largest subject token accepted (our own tokens are under 1 KiB). */
export const MAX_SUBJECT_TOKEN_BYTES = 8192;

interface ExchangeOptions {
  issuer: string;
  /** The signing keys (private JWKs; only their public parts are used here). */
  keys: JWK[];
  resources: Record<string, readonly string[]>;
  canonical: (resource: string) => string;
  accessTokenTtl: number;
}

export function registerTokenExchange(
  provider: Provider,
  errors: typeof import('oidc-provider').errors,
  options: ExchangeOptions,
) {
  const publicKeys = createLocalJWKSet({
    keys: options.keys.map(({ d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...pub }) => pub),
  });
  const handler = async (ctx: KoaContextWithOIDC) => {
    const params = ctx.oidc.params as Record<string, string | undefined>;
    if (params.subject_token_type !== ACCESS_TOKEN_TYPE) {
      throw new errors.InvalidRequest(`subject_token_type must be ${ACCESS_TOKEN_TYPE}`);
    }
    const subjectToken = params.subject_token ?? '';
    if (!subjectToken) throw new errors.InvalidRequest('subject_token is missing');
    if (Buffer.byteLength(subjectToken) > MAX_SUBJECT_TOKEN_BYTES) {
      throw new errors.InvalidRequest(`subject_token is longer than ${MAX_SUBJECT_TOKEN_BYTES} bytes`);
    }
    if (params.requested_token_type && params.requested_token_type !== ACCESS_TOKEN_TYPE) {
      throw new errors.InvalidRequest(`requested_token_type may only be ${ACCESS_TOKEN_TYPE}`);
    }
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(subjectToken, publicKeys, {
        issuer: options.issuer,
        typ: 'at+jwt',
        algorithms: ['ES256'],
      }));
    } catch (error) {
      const why =
        error instanceof joseErrors.JWTExpired ? 'it has expired' : 'it is not a valid access token of this server';
      throw new errors.InvalidGrant(`subject_token refused: ${why}`);
    }
    const audiences = ([] as unknown[]).concat(payload.aud ?? []).map(String);
    if (!audiences.some((aud) => Object.hasOwn(options.resources, aud))) {
      throw new errors.InvalidGrant('subject_token refused: it was not issued for a resource of this server');
    }
    const user = findUser(String(payload.sub ?? ''));
    if (!user) throw new errors.InvalidGrant('subject_token refused: it speaks for no user of this server');
    const requested = params.resource ?? params.audience;
    if (!requested) throw new errors.InvalidTarget('name the API the token is for: resource (or audience)');
    const target = options.canonical(requested);
    const accepted = options.resources[target];
    if (!accepted) {
      throw new errors.InvalidTarget(
        `unknown resource; this server issues tokens for ${Object.keys(options.resources).join(', ')}`,
      );
    }
    // Never more than the user's token grants, the API accepts and the user's role allows now.
    const held = new Set(
      String(payload.scope ?? '')
        .split(' ')
        .filter(Boolean),
    );
    const allowed = accepted.filter((s) => held.has(s) && user.scopes.includes(s));
    const asked = (params.scope ?? '').split(' ').filter(Boolean);
    const beyond = asked.filter((s) => !allowed.includes(s));
    if (beyond.length > 0) {
      throw new errors.InvalidScope(
        `the subject token does not allow ${beyond.join(' ')} for ${target} (it allows: ${allowed.join(' ') || 'nothing there'})`,
        beyond.join(' '),
      );
    }
    const scope = asked.length > 0 ? asked : allowed;
    if (scope.length === 0) throw new errors.InvalidScope(`the subject token allows no scope for ${target}`, '');
    // Never outlives the token it was exchanged for.
    const left = Number(payload.exp) - Math.floor(Date.now() / 1000);
    const token = new provider.AccessToken({
      accountId: user.id,
      client: ctx.oidc.client,
      scope: scope.join(' '),
      gty: 'token-exchange',
      expiresIn: Math.max(1, Math.min(options.accessTokenTtl, left)),
      resourceServer: new provider.ResourceServer(target, {
        audience: target,
        scope: accepted.join(' '),
        accessTokenFormat: 'jwt',
        accessTokenTTL: options.accessTokenTtl,
        jwt: { sign: { alg: 'ES256' } },
      }),
    } as never);
    ctx.oidc.entity('AccessToken', token);
    const value = await token.save();
    ctx.body = {
      access_token: value,
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: 'Bearer',
      expires_in: token.expiration,
      scope: scope.join(' '),
    };
  };
  provider.registerGrantType(TOKEN_EXCHANGE, handler, [
    'subject_token',
    'subject_token_type',
    'requested_token_type',
    'resource',
    'audience',
    'scope',
  ]);
}
