// The official MCP TypeScript SDK client over Streamable HTTP against /mcp.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { authHeaders, parentsOf, QUERIES, retrieve, startServer } from "./helpers.mjs";

let server;
let client;
before(async () => {
  server = await startServer();
  client = new Client({ name: "parentrag-client-tests", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${server.baseURL}/mcp`), {
    requestInit: { headers: authHeaders() },
  });
  await client.connect(transport);
});
after(async () => {
  await client?.close();
  await server?.stop();
});

test("listTools lists retrieve with its input schema", async () => {
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name), ["retrieve"]);
  const [tool] = tools;
  assert.deepEqual(tool.inputSchema.required, ["query"]);
  for (const field of ["query", "maxParents", "budget", "filter"]) assert.ok(field in tool.inputSchema.properties, field);
  assert.ok(tool.outputSchema, "the tool declares its structured output");
});

test("callTool retrieve returns the parents of /v1/retrieve", async () => {
  for (const query of QUERIES) {
    const args = { query, maxParents: 3 };
    const res = await client.callTool({ name: "retrieve", arguments: args });
    assert.ok(!res.isError, JSON.stringify(res.content));
    const want = await retrieve(server.baseURL, args);
    assert.deepEqual(parentsOf(res.structuredContent.results), parentsOf(want), query);
    assert.equal(res.content.length, want.length);
    res.content.forEach((c, i) => {
      assert.equal(c.type, "text");
      assert.ok(c.text.includes(`source: ${want[i].docId}`), c.text);
      assert.ok(c.text.endsWith(want[i].text));
    });
  }
});

test("readResource reads a returned parent whole", async () => {
  const query = QUERIES[0];
  const res = await client.callTool({ name: "retrieve", arguments: { query, maxParents: 1, budget: 60 } });
  const [trimmed] = res.structuredContent.results;
  assert.ok(trimmed.trimmed, "a budget of 60 trims the parent");
  const [whole] = await retrieve(server.baseURL, { query, maxParents: 1 });
  const { contents } = await client.readResource({ uri: `parentrag://parents/${trimmed.parentId}` });
  assert.equal(contents[0].text, whole.text);
  assert.equal(contents[0]._meta.docId, whole.docId);
});

test("callTool refuses bad arguments as a tool error", async () => {
  const res = await client.callTool({ name: "retrieve", arguments: { query: "x", maxParents: 99 } });
  assert.ok(res.isError);
  assert.match(res.content[0].text, /maxParents 99: want 1 to 20/);
});
