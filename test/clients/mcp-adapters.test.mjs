// The retrieve tool loaded through @langchain/mcp-adapters and invoked as
// a LangChain tool, as a LangGraph agent would.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { MultiServerMCPClient } from "@langchain/mcp-adapters";

import { authHeaders, QUERIES, retrieve, startServer } from "./helpers.mjs";

let server;
let client;
before(async () => {
  server = await startServer();
  client = new MultiServerMCPClient({
    mcpServers: {
      parentrag: { transport: "http", url: `${server.baseURL}/mcp`, headers: authHeaders(), automaticSSEFallback: false },
    },
  });
});
after(async () => {
  await client?.close();
  await server?.stop();
});

test("the retrieve tool, invoked as a LangChain tool, returns the parents of /v1/retrieve", async () => {
  const tools = await client.getTools();
  const tool = tools.find((t) => t.name === "retrieve");
  assert.ok(tool, `tools: ${tools.map((t) => t.name)}`);
  for (const query of QUERIES) {
    const out = await tool.invoke({ query, maxParents: 3 });
    const text = typeof out === "string" ? out : JSON.stringify(out);
    const want = await retrieve(server.baseURL, { query, maxParents: 3 });
    const got = [...text.matchAll(/\[\d+\] source: (\S+)[^\n]*?, parent (\w+), score/g)].map((m) => ({ docId: m[1], parentId: m[2] }));
    assert.deepEqual(got, want.map(({ docId, parentId }) => ({ docId, parentId })), query);
  }
});
