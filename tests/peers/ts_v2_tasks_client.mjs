// The TypeScript SDK v2 client (@modelcontextprotocol/client), for tests/tasks/test_tasks_interop.py:
// `node ts_v2_tasks_client.mjs MODE TARGET...` with MODE the client's versionNegotiation mode
// (`auto` probes with server/discover, `legacy` runs initialize) and TARGET either a Streamable
// HTTP URL or `stdio COMMAND ARGS...`. It calls the example server's task tools without asking for
// a task (this client does not declare the tasks extension) and prints what it got as one JSON
// object, including the revision it negotiated.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [mode, target, ...rest] = process.argv.slice(2);
const transport =
  target === "stdio"
    ? new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: "ignore" })
    : new StreamableHTTPClientTransport(new URL(target));
const client = new Client(
  { name: "ts-v2-tasks-client", version: "1.0.0" },
  { versionNegotiation: { mode } },
);
await client.connect(transport);
const seen = {
  protocolVersion: client.getNegotiatedProtocolVersion(),
  era: client.getProtocolEra(),
  extensions: Object.keys(client.getDiscoverResult()?.capabilities?.extensions ?? {}),
};
const tools = await client.listTools();
seen.taskSupport = Object.fromEntries(
  tools.tools.filter((t) => t.execution?.taskSupport).map((t) => [t.name, t.execution.taskSupport]),
);
const computed = await client.callTool({ name: "slow_compute", arguments: { seconds: 0.1, label: "v2" } });
seen.computed = computed.content;
seen.computedKeys = Object.keys(computed).sort();
seen.computedIsError = computed.isError ?? false;
seen.computedStructured = computed.structuredContent ?? null;
seen.greet = (await client.callTool({ name: "greet", arguments: { name: "TSv2" } })).content;
try {
  const refused = await client.callTool({ name: "failing_job", arguments: {} });
  seen.required = { result: refused };
} catch (error) {
  seen.required = { code: error.code ?? null, message: String(error.message), data: error.data ?? null };
}
await client.close();
console.log(JSON.stringify(seen));
