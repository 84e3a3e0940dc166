// The TypeScript SDK v1 client over legacy Streamable HTTP, for tests/http/test_http_hardening.py:
// `node ts_legacy_client.mjs URL` connects (initialize, session), makes calls the server answers
// with JSON-RPC errors, then one that succeeds on the same session, and prints what it saw as
// one JSON object.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const transport = new StreamableHTTPClientTransport(new URL(process.argv[2]));
const client = new Client({ name: "ts-legacy-client", version: "1.0.0" });
await client.connect(transport);
const seen = { sessionId: transport.sessionId, protocolVersion: transport.protocolVersion, errors: [] };

async function failing(what, call) {
  try {
    await call();
    seen.errors.push({ what, error: null });
  } catch (error) {
    seen.errors.push({ what, name: error.constructor.name, code: error.code ?? null, message: String(error.message) });
  }
}

// A tool that asks the user: this client declared no elicitation (-32601).
await failing("ask", () => client.callTool({ name: "ask", arguments: {} }));
// A tool this server does not have (-32602).
await failing("unknown tool", () => client.callTool({ name: "nope", arguments: {} }));
const tools = await client.listTools();
seen.tools = tools.tools.map((tool) => tool.name).sort();
seen.echo = (await client.callTool({ name: "echo", arguments: { text: "still here" } })).content;
seen.sameSession = transport.sessionId === seen.sessionId;
await transport.terminateSession();
await client.close();
console.log(JSON.stringify(seen));
