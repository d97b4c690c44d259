// Signing in to a gateway that asks for it, as the MCP backend calls it: a call the server
// refused for want of a sign-in (or of a wider scope) finished and tried again, and the reason
// of a 403 kept for the person reading the run.
import { type OAuthClientProvider, UnauthorizedError } from '@modelcontextprotocol/client';
import { AgentOAuthProvider } from './agent-oauth.js';

/**
 * Runs `attempt`; when the server wanted a sign-in (first use, or a step-up to a wider scope)
 * and the provider started one, finishes it and runs `attempt` again, at most twice.
 */
export async function withSignIn<T>(provider: OAuthClientProvider | undefined, attempt: () => Promise<T>): Promise<T> {
  for (let round = 0; ; round += 1) {
    try {
      return await attempt();
    } catch (error) {
      const canFinish = provider instanceof AgentOAuthProvider && provider.pending && round < 2;
      if (!(error instanceof UnauthorizedError) || !canFinish) throw error;
      await provider.completeSignIn();
    }
  }
}

/**
 * Remembers the last 403's reason (its WWW-Authenticate error_description): the SDK's error for
 * it says only which scopes, and a person wants to know why.
 */
export class RefusalWatch {
  #last: string | undefined;

  watch(fetchFn: typeof fetch): typeof fetch {
    return async (input, init) => {
      const response = await fetchFn(input, init);
      if (response.status === 403) {
        const challenge = response.headers.get('www-authenticate') ?? '';
        this.#last = /error_description="([^"]*)"/.exec(challenge)?.[1] ?? `HTTP 403 (${challenge.slice(0, 200)})`;
      }
      return response;
    };
  }

  /** The reason of a 403 since the last take, if any. */
  take(): string | undefined {
    const last = this.#last;
    this.#last = undefined;
    return last;
  }
}
