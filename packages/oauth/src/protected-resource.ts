// RFC 9728 Protected Resource Metadata: the document a client reads to learn which
// authorization server issues tokens for this resource, and where that document lives.

export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported?: string[];
  bearer_methods_supported: ['header'];
  resource_name?: string;
  resource_documentation?: string;
}

export function protectedResourceMetadata(options: {
  resource: string;
  authorizationServers: string[];
  scopesSupported?: string[] | undefined;
  resourceName?: string | undefined;
}): ProtectedResourceMetadata {
  return {
    resource: options.resource,
    authorization_servers: options.authorizationServers,
    ...(options.scopesSupported && options.scopesSupported.length > 0
      ? { scopes_supported: options.scopesSupported }
      : {}),
    bearer_methods_supported: ['header'],
    ...(options.resourceName ? { resource_name: options.resourceName } : {}),
  };
}

/** The root of every metadata URL of this kind. */
export const PROTECTED_RESOURCE_WELL_KNOWN = '/.well-known/oauth-protected-resource';

/**
 * Where a resource's metadata is (RFC 9728 §3.1): the well-known path between the host and the
 * resource's path, so `https://mcp.example.com/mcp` has it at
 * `https://mcp.example.com/.well-known/oauth-protected-resource/mcp`.
 */
export function protectedResourceMetadataUrl(resource: string): string {
  const url = new URL(resource);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  return `${url.origin}${PROTECTED_RESOURCE_WELL_KNOWN}${path}`;
}

/**
 * A resource URL as the audience a token must name: no fragment, no query, and no trailing
 * slash on a path (RFC 8707 §2 and MCP's canonical server URI), the scheme and host in lower case.
 */
export function canonicalResource(resource: string): string {
  const url = new URL(resource);
  url.hash = '';
  url.search = '';
  return url.toString().replace(/\/$/, '');
}
