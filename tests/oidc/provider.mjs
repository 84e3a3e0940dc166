// A certified OpenID provider (oidc-provider) on 127.0.0.1 for the OAuth proxy's tests
// (tests/auth/test_oauth_proxy_oidc.py): the proxy's fixed client, and the development login
// and consent pages, where any login and password sign the user in as that login.
//
//   node provider.mjs PORT CLIENT_ID CLIENT_SECRET REDIRECT_URI
//
// It prints "listening" once it accepts connections.
import Provider from "oidc-provider";

const [port, clientId, clientSecret, redirectUri] = process.argv.slice(2);
const issuer = `http://127.0.0.1:${port}`;

const configuration = {
  clients: [
    {
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: [redirectUri],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_post",
    },
  ],
  pkce: { required: () => true },
  features: {
    devInteractions: { enabled: true },
    revocation: { enabled: true },
  },
  scopes: ["openid", "offline_access", "email", "profile", "groups"],
  claims: {
    openid: ["sub"],
    email: ["email", "email_verified"],
    profile: ["name"],
    groups: ["groups"],
  },
  async findAccount(ctx, id) {
    return {
      accountId: id,
      async claims() {
        return {
          sub: id,
          email: `${id}@example.test`,
          email_verified: true,
          name: `Test user ${id}`,
          groups: ["staff", "mcp-users"],
        };
      },
    };
  },
};

const provider = new Provider(issuer, configuration);
provider.listen(Number(port), "127.0.0.1", () => console.log("listening"));
