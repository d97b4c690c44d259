// The whole decision a resource server makes about a request's credentials, for any HTTP
// framework: read the bearer token strictly, check it for this resource, and when it fails,
// the answer to send (status, challenge, description). The gateway and the toy API both use it.
import { type BearerProblem, DEFAULT_MAX_TOKEN_BYTES, readBearer } from './bearer.js';
import { wwwAuthenticate } from './challenge.js';
import {
  AuthServerUnavailableError,
  type Principal,
  TokenRejectedError,
  type TokenVerifier,
} from './token-verifier.js';

/** What to answer instead of serving the request. */
export interface Denial {
  status: 400 | 401 | 403 | 503;
  /** The OAuth error code, or undefined when no credentials were sent. */
  error: BearerProblem['error'] | 'insufficient_scope' | 'temporarily_unavailable';
  description: string;
  headers: Record<string, string>;
}

/** This resource as a request reached it. */
export interface ResourceTarget {
  /** The canonical URL a token's `aud` must contain. */
  resource: string;
  /** Where its protected-resource metadata is. */
  resourceMetadata: string;
  /** Scopes to name in a challenge: what the resource supports, when the need is not known yet. */
  scopes?: string[] | undefined;
}

export type Authentication = { principal: Principal } | { denial: Denial };

export class ResourceServer {
  constructor(
    private readonly verifier: TokenVerifier,
    private readonly maxTokenBytes = DEFAULT_MAX_TOKEN_BYTES,
  ) {}

  async authenticate(request: { rawHeaders: string[]; url: string }, target: ResourceTarget): Promise<Authentication> {
    const read = readBearer(request, this.maxTokenBytes);
    if ('problem' in read) return { denial: challengeDenial(target, read.problem) };
    try {
      return { principal: await this.verifier.verify(read.token, target.resource) };
    } catch (error) {
      if (error instanceof TokenRejectedError) {
        return {
          denial: challengeDenial(target, { status: 401, error: 'invalid_token', description: error.message }),
        };
      }
      if (error instanceof AuthServerUnavailableError) {
        return {
          denial: {
            status: 503,
            error: 'temporarily_unavailable',
            description: `access tokens cannot be checked now: ${error.message}`,
            headers: { 'retry-after': '5' },
          },
        };
      }
      throw error;
    }
  }
}

/** A 403 naming the scopes a request needs (RFC 6750 §3.1), so a client can ask for them (step-up). */
export function insufficientScope(target: ResourceTarget, principal: Principal, needed: string[]): Denial {
  // The challenge names what the client should now ask for: what it has and what it lacks.
  const scope = [...new Set([...principal.scopes, ...needed])];
  const description = `this needs the scope${needed.length > 1 ? 's' : ''} ${needed.join(', ')}; the token has ${principal.scopes.length > 0 ? principal.scopes.join(', ') : 'none'}`;
  return {
    status: 403,
    error: 'insufficient_scope',
    description,
    headers: {
      'www-authenticate': wwwAuthenticate({
        resourceMetadata: target.resourceMetadata,
        scope,
        error: 'insufficient_scope',
        description,
      }),
    },
  };
}

/** The scopes in `needed` that a principal lacks. */
export function missingScopes(principal: Principal, needed: readonly string[]): string[] {
  return needed.filter((scope) => !principal.scopes.includes(scope));
}

function challengeDenial(target: ResourceTarget, problem: BearerProblem): Denial {
  return {
    status: problem.status,
    error: problem.error,
    description: problem.description,
    headers: {
      'www-authenticate': wwwAuthenticate({
        resourceMetadata: target.resourceMetadata,
        scope: target.scopes,
        error: problem.error,
        description: problem.error ? problem.description : undefined,
      }),
    },
  };
}
