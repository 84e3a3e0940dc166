// The TypeScript SDK v1 client touring a published server, for tests/interop/test_real_servers.py:
// `node ts_real_tour.mjs PLAN` where PLAN (JSON) says how to connect (`stdio`: a command; `url`:
// a Streamable HTTP endpoint) and what to do beyond the listings (`calls`, `prompts`, the
// `volatile` tools whose answers change, `reads`: how many listed resources to read). One process
// does the whole tour and prints one JSON object: each operation's outcome, and the failures.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const plan = JSON.parse(process.argv[2]);
const outcomes = {};
const failures = {};

async function run(operation, action, keep = true) {
  try {
    const value = await action();
    outcomes[operation] = keep ? value : null;
    return value;
  } catch (error) {
    failures[operation] = `${error.constructor.name}: ${error.message}`;
    return undefined;
  }
}

async function everyItem(list, field) {
  const items = [];
  let cursor;
  do {
    const page = await list(cursor === undefined ? {} : { cursor });
    items.push(...page[field]);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

const transport = plan.url
  ? new StreamableHTTPClientTransport(new URL(plan.url))
  : new StdioClientTransport({
      command: plan.stdio[0],
      args: plan.stdio.slice(1),
      env: { ...process.env },
      stderr: "ignore",
    });
const client = new Client({ name: "ts-real-tour", version: "1.0.0" });
await run("initialize", async () => {
  await client.connect(transport);
  return client.getServerVersion();
});

const offered = client.getServerCapabilities() ?? {};
const listings = [
  ["tools", "list_tools", (p) => client.listTools(p), "tools"],
  ["prompts", "list_prompts", (p) => client.listPrompts(p), "prompts"],
  ["resources", "list_resources", (p) => client.listResources(p), "resources"],
  ["resources", "list_resource_templates", (p) => client.listResourceTemplates(p), "resourceTemplates"],
];
const found = {};
for (const [capability, operation, list, field] of listings) {
  if (offered[capability] === undefined) continue; // not offered: no operation of it
  found[field] = (await run(operation, () => everyItem(list, field))) ?? [];
}

for (const [tool, args] of plan.calls) {
  await run(
    `tools/call ${tool}`,
    async () => {
      const result = await client.callTool({ name: tool, arguments: args });
      if (result.isError) throw new Error(`${tool} answered an error: ${JSON.stringify(result)}`);
      return result;
    },
    !plan.volatile.includes(tool),
  );
}
for (const resource of (found.resources ?? []).slice(0, plan.reads)) {
  await run(`resources/read ${resource.uri}`, () => client.readResource({ uri: resource.uri }));
}
for (const [prompt, args] of plan.prompts) {
  await run(`prompts/get ${prompt}`, () => client.getPrompt({ name: prompt, arguments: args }));
}
await client.close();
console.log(JSON.stringify({ outcomes, failures }));
