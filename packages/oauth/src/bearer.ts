// Reading a bearer token from a request, strictly (RFC 6750 §2.1, and OAuth 2.1 §5.2, which
// drops the query-string method): one Authorization header, the Bearer scheme, a token of
// token68 characters, no longer than a cap. Anything else is a problem named in words a client
// can act on, never echoing the token.

/** The default cap on a token's length: a JWT with generous claims is 1 to 3 KB. */
export const DEFAULT_MAX_TOKEN_BYTES = 8192;

/** What was wrong with the request's credentials, as RFC 6750 names it. */
export interface BearerProblem {
  /** `undefined`: no credentials at all (the challenge then carries no error code, RFC 6750 §3.1). */
  error: 'invalid_request' | 'invalid_token' | undefined;
  /** 400 for a malformed request, 401 for missing or bad credentials. */
  status: 400 | 401;
  description: string;
}

export type BearerRead = { token: string } | { problem: BearerProblem };

// token68 (RFC 7235 §2.1): what a bearer token may contain.
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;
// What an auth scheme's name looks like (Basic, Digest, DPoP, AWS4-HMAC-SHA256): short, a letter first.
const SCHEME_NAME = /^[A-Za-z][A-Za-z0-9-]{0,19}$/;

/**
 * The bearer token of a request, from its raw headers (Node keeps only the first of repeated
 * Authorization headers in `headers`, so two are only visible here) and its URL.
 */
export function readBearer(
  request: { rawHeaders: string[]; url: string },
  maxTokenBytes = DEFAULT_MAX_TOKEN_BYTES,
): BearerRead {
  const values: string[] = [];
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    if (request.rawHeaders[i]?.toLowerCase() === 'authorization') values.push(request.rawHeaders[i + 1] ?? '');
  }
  if (hasQueryToken(request.url)) {
    return problem(
      400,
      'invalid_request',
      'access tokens are not accepted in the URL (access_token); send "Authorization: Bearer <token>"',
    );
  }
  if (values.length === 0) {
    return problem(401, undefined, 'no credentials: send an access token as "Authorization: Bearer <token>"');
  }
  if (values.length > 1) {
    return problem(400, 'invalid_request', `${values.length} Authorization headers; send exactly one`);
  }
  const value = values[0] ?? '';
  const space = value.indexOf(' ');
  const scheme = space < 0 ? value : value.slice(0, space);
  if (scheme.toLowerCase() !== 'bearer') {
    // Named back only when it looks like a scheme: a token sent with no scheme is not echoed.
    const named = SCHEME_NAME.test(scheme) ? `not '${scheme}'` : 'and the header starts with no scheme name';
    return problem(401, 'invalid_request', `the Authorization scheme must be Bearer, ${named}`);
  }
  // "Bearer" alone has no token (and must not be read as the token "Bearer").
  const token = space < 0 ? '' : value.slice(space + 1).trim();
  if (Buffer.byteLength(token) > maxTokenBytes) {
    return problem(
      401,
      'invalid_token',
      `the access token is longer than ${maxTokenBytes} bytes (MAX_TOKEN_BYTES); it cannot be one this server issued`,
    );
  }
  if (token === '' || !TOKEN68.test(token)) {
    return problem(401, 'invalid_token', 'the bearer token is empty or has characters a token cannot have');
  }
  return { token };
}

function hasQueryToken(url: string): boolean {
  const query = url.indexOf('?');
  return query >= 0 && new URLSearchParams(url.slice(query + 1)).has('access_token');
}

function problem(status: 400 | 401, error: BearerProblem['error'], description: string): BearerRead {
  return { problem: { status, error, description } };
}
