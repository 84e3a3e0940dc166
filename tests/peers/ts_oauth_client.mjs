// The TypeScript SDK v1 client logging in through mcpio's OAuth proxy, for
// tests/auth/test_oauth_proxy_oidc.py: `node ts_oauth_client.mjs URL REDIRECT_URI` connects,
// registers with the proxy (dynamic registration) when the server answers 401, prints
// `AUTHORIZE <url>` for the test's browser, reads the URL the browser was sent back to from
// its standard input, finishes the login, calls `whoami` and prints its structured content
// as one JSON line.
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, redirectUrl] = process.argv.slice(2);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const saved = {};
const authProvider = {
  get redirectUrl() {
    return redirectUrl;
  },
  get clientMetadata() {
    return {
      client_name: "ts-sdk-oauth-client",
      redirect_uris: [redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  },
  clientInformation: () => saved.client,
  saveClientInformation: (client) => (saved.client = client),
  tokens: () => saved.tokens,
  saveTokens: (tokens) => (saved.tokens = tokens),
  saveCodeVerifier: (verifier) => (saved.verifier = verifier),
  codeVerifier: () => saved.verifier,
  redirectToAuthorization: (authorizationUrl) => console.log(`AUTHORIZE ${authorizationUrl.href}`),
};

const connect = async () => {
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider });
  const client = new Client({ name: "ts-sdk-oauth-client", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
};

let session;
try {
  session = await connect();
} catch (error) {
  if (!(error instanceof UnauthorizedError)) throw error;
  const back = new URL((await lines.next()).value);
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider });
  await transport.finishAuth(back.searchParams.get("code"));
  session = await connect();
}
const result = await session.client.callTool({ name: "whoami", arguments: {} });
console.log(JSON.stringify(result.structuredContent));
await session.client.close();
process.exit(0);
