/**
 * The OAuth discovery documents: RFC 8414 authorization server metadata and
 * RFC 9728 protected resource metadata (docs/adr/0012-oauth-server.md). The
 * issuer is the service's base URL; the `iss` of every authorization
 * response is this exact string (RFC 9207), so strict clients can compare it.
 */

/** What an MCP client asks for: both scopes, so one consent covers every tool. */
export const MCP_SCOPES = "mcp.read mcp.write";

export const oauthIssuer = (baseUrl: string): string => baseUrl.replace(/\/+$/, "");

/** RFC 9728 §3.1: the well-known URI is inserted between the host and the resource's path. */
export function protectedResourceMetadataUrl(baseUrl: string, resourcePath: "" | "/mcp"): string {
  const url = new URL(oauthIssuer(baseUrl));
  return `${url.origin}/.well-known/oauth-protected-resource${url.pathname.replace(/\/+$/, "")}${resourcePath}`;
}

export function authorizationServerMetadata(baseUrl: string, docsUrl: string) {
  const issuer = oauthIssuer(baseUrl);
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    registration_endpoint: `${issuer}/oauth/register`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    scopes_supported: ["checkouts.write", "mcp.read", "mcp.write"],
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["none", "client_secret_basic", "client_secret_post"],
    revocation_endpoint_auth_methods_supported: ["none", "client_secret_basic", "client_secret_post"],
    authorization_response_iss_parameter_supported: true,
    service_documentation: docsUrl,
  };
}

/**
 * The resource `/mcp` takes the MCP scopes; the root document describes the
 * REST API at the base URL (RFC 9728 §3.3: `resource` is exactly the URL the
 * well-known path was inserted into), which takes `checkouts.write`.
 */
export function protectedResourceMetadata(baseUrl: string, resource: "rest" | "mcp", serviceName: string, docsUrl: string) {
  const issuer = oauthIssuer(baseUrl);
  return {
    resource: resource === "mcp" ? `${issuer}/mcp` : issuer,
    authorization_servers: [issuer],
    scopes_supported: resource === "mcp" ? MCP_SCOPES.split(" ") : ["checkouts.write"],
    bearer_methods_supported: ["header"],
    resource_name: resource === "mcp" ? `${serviceName} MCP server` : `${serviceName} REST API`,
    resource_documentation: docsUrl,
  };
}
