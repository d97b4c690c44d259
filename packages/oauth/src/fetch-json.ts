// One bounded JSON fetch for the documents a resource server reads from its authorization
// server (metadata, keys, introspection answers): a time limit and a size cap, so that a slow
// or hostile server cannot hold or fill the resource server.

export interface FetchLimits {
  timeoutMs: number;
  maxBytes: number;
}

export class AuthServerUnavailableError extends Error {
  override name = 'AuthServerUnavailableError';
}

export async function fetchJson(url: string, limits: FetchLimits, init: RequestInit = {}): Promise<unknown> {
  const answer = await fetchJsonAnswer(url, limits, init);
  if (answer.status < 200 || answer.status > 299)
    throw new AuthServerUnavailableError(`${url} answered ${answer.status}`);
  return answer.body;
}

/**
 * The status and JSON body of an answer, errors included (a token endpoint explains a refusal
 * in its 400's body); unreachable, too large or not JSON is AuthServerUnavailableError.
 */
export async function fetchJsonAnswer(
  url: string,
  limits: FetchLimits,
  init: RequestInit = {},
): Promise<{ status: number; body: unknown }> {
  let response: Response;
  try {
    response = await fetch(url, {
      ...init,
      redirect: 'error',
      signal: AbortSignal.timeout(limits.timeoutMs),
      headers: { accept: 'application/json', ...(init.headers as Record<string, string> | undefined) },
    });
  } catch (error) {
    throw new AuthServerUnavailableError(
      timedOut(error) ? `${url} did not answer ${within(limits)}` : `${url} could not be reached: ${reason(error)}`,
    );
  }
  if (response.status >= 500 || (!response.ok && !/json/i.test(response.headers.get('content-type') ?? ''))) {
    await response.body?.cancel();
    throw new AuthServerUnavailableError(`${url} answered ${response.status}`);
  }
  const text = await readCapped(response, url, limits);
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    throw new AuthServerUnavailableError(`${url} did not answer JSON`);
  }
}

async function readCapped(response: Response, url: string, limits: FetchLimits): Promise<string> {
  const { maxBytes } = limits;
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel();
        throw new AuthServerUnavailableError(
          `${url} answered more than ${maxBytes} bytes, the most read from an authorization server`,
        );
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof AuthServerUnavailableError) throw error;
    throw new AuthServerUnavailableError(
      timedOut(error)
        ? `${url} did not finish its answer ${within(limits)}`
        : `${url} broke off its answer: ${reason(error)}`,
    );
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** AbortSignal.timeout's abort, as fetch and a body's reader throw it. */
const timedOut = (error: unknown) => (error as { name?: unknown } | null)?.name === 'TimeoutError';
const within = (limits: FetchLimits) =>
  `within ${limits.timeoutMs} ms, the time an authorization server is given for an answer`;

function reason(error: unknown): string {
  const cause = (error as { cause?: { code?: string } }).cause?.code;
  return cause ?? (error instanceof Error ? error.message : String(error));
}
