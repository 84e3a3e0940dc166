// The TypeScript SDK v1 client over legacy Streamable HTTP, for tests/tasks/test_tasks_interop.py:
// `node ts_tasks_client.mjs URL` calls the example server's task tools without asking for a
// task and prints what it got as one JSON object.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const transport = new StreamableHTTPClientTransport(new URL(process.argv[2]));
const client = new Client({ name: "ts-tasks-client", version: "1.0.0" });
await client.connect(transport);
const seen = { protocolVersion: transport.protocolVersion };
const tools = await client.listTools();
seen.taskSupport = Object.fromEntries(
  tools.tools.filter((t) => t.execution?.taskSupport).map((t) => [t.name, t.execution.taskSupport]),
);
const computed = await client.callTool({ name: "slow_compute", arguments: { seconds: 0.1, label: "ts" } });
seen.computed = computed.content;
seen.computedKeys = Object.keys(computed).sort();
seen.greet = (await client.callTool({ name: "greet", arguments: { name: "TS" } })).content;
try {
  await client.callTool({ name: "failing_job", arguments: {} });
  seen.required = null;
} catch (error) {
  seen.required = { code: error.code ?? null, message: String(error.message) };
}
await transport.terminateSession();
await client.close();
console.log(JSON.stringify(seen));
