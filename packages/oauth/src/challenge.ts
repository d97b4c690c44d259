// The challenge a resource server sends with a 401 or 403 (RFC 6750 §3, RFC 9728 §5.1): where
// its protected-resource metadata is, which scopes to ask for, and what was wrong.

export interface Challenge {
  /** The URL of this resource's metadata document (RFC 9728). */
  resourceMetadata: string;
  /** Scopes to ask for: those the request needed, or all the resource supports. */
  scope?: string[] | undefined;
  error?: 'invalid_request' | 'invalid_token' | 'insufficient_scope' | undefined;
  description?: string | undefined;
}

/** The `WWW-Authenticate` value for a challenge. */
export function wwwAuthenticate(challenge: Challenge): string {
  const params = [`resource_metadata="${quoted(challenge.resourceMetadata)}"`];
  if (challenge.scope && challenge.scope.length > 0) params.push(`scope="${quoted(challenge.scope.join(' '))}"`);
  if (challenge.error) params.push(`error="${challenge.error}"`);
  if (challenge.description) params.push(`error_description="${quoted(challenge.description)}"`);
  return `Bearer ${params.join(', ')}`;
}

// RFC 6750 §3: error_description is printable ASCII without '"' and '\'; scope likewise.
function quoted(value: string): string {
  return value.replace(/[^\x20-\x7e]|["\\]/g, "'").slice(0, 500);
}
