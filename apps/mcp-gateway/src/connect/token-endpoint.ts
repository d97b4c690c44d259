// One request to a token endpoint as a confidential client (RFC 6749 section 2.3.1): the client's
// id and secret in HTTP Basic (the way every server must take) or in the form, as its `connect`
// block says. Bounded like every fetch to an authorization server (@agentwire/oauth's fetchJsonAnswer):
// an answer that does not come, is too large or is not JSON is AuthServerUnavailableError.
import { AuthServerUnavailableError, fetchJsonAnswer } from '@agentwire/oauth';

export interface TokenClient {
  clientId: string;
  clientSecret: string;
  /** basic (default) or post. */
  clientAuth?: 'basic' | 'post' | undefined;
}

export interface TokenAnswer {
  status: number;
  body: Record<string, unknown>;
}

export async function fetchTokenAnswer(
  url: string,
  client: TokenClient,
  form: Record<string, string>,
  limits: { timeoutMs: number; maxBytes: number },
): Promise<TokenAnswer> {
  const post = client.clientAuth === 'post';
  const basic = Buffer.from(
    `${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`,
  ).toString('base64');
  const { status, body } = await fetchJsonAnswer(url, limits, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(post ? {} : { authorization: `Basic ${basic}` }),
    },
    body: new URLSearchParams({
      ...form,
      ...(post ? { client_id: client.clientId, client_secret: client.clientSecret } : {}),
    }),
  });
  const answer = typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {};
  return { status, body: answer as Record<string, unknown> };
}

export { AuthServerUnavailableError };
