// Every client is refused with 401 when it sends no token or a wrong one,
// and the probes stay open, on a server started with `--auth bearer`.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { MultiServerMCPClient } from "@langchain/mcp-adapters";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import OpenAI, { AuthenticationError } from "openai";

import { authHeaders, CORPUS, QUERIES, startServer, WRONG_TOKEN } from "./helpers.mjs";
import { ParentragRetriever } from "./parentrag-retriever.mjs";

// CALLERS are the two refused identities: no token, and a wrong one.
const CALLERS = [
  ["no token", ""],
  ["a wrong token", WRONG_TOKEN],
];

let server;
before(async () => {
  server = await startServer();
});
after(() => server?.stop());

test("the probes answer without a token", async () => {
  for (const path of ["/healthz", "/readyz"]) assert.equal((await fetch(server.baseURL + path)).status, 200, path);
});

for (const [who, token] of CALLERS) {
  test(`the OpenAI SDK with ${who} gets AuthenticationError`, async () => {
    // The SDK insists on an API key; "" is refused by the SDK itself, so
    // the missing token is a header override.
    const client = new OpenAI({
      baseURL: `${server.baseURL}/v1`,
      apiKey: token || "placeholder",
      defaultHeaders: token ? {} : { Authorization: null },
      maxRetries: 0,
    });
    await assert.rejects(client.vectorStores.search(CORPUS, { query: QUERIES[0] }), (err) => {
      assert.ok(err instanceof AuthenticationError, String(err));
      assert.equal(err.status, 401);
      return true;
    });
  });

  test(`the MCP SDK client with ${who} cannot connect`, async () => {
    const client = new Client({ name: "parentrag-client-tests", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(`${server.baseURL}/mcp`), {
      requestInit: { headers: authHeaders(token) },
    });
    await assert.rejects(client.connect(transport), (err) => {
      assert.equal(err.code, 401, String(err));
      return true;
    });
  });

  test(`the LangChain.js RemoteRetriever with ${who} is refused`, async () => {
    const retriever = new ParentragRetriever({
      url: `${server.baseURL}/v1/langchain/retrieve`,
      auth: token ? { bearer: token } : false,
    });
    await assert.rejects(retriever.invoke(QUERIES[0]), /: 401 /);
  });

  test(`@langchain/mcp-adapters with ${who} loads no tool`, async () => {
    const client = new MultiServerMCPClient({
      throwOnLoadError: true,
      mcpServers: {
        parentrag: { transport: "http", url: `${server.baseURL}/mcp`, headers: authHeaders(token), automaticSSEFallback: false },
      },
    });
    try {
      // The adapter names a 401 "Authentication failed".
      await assert.rejects(client.getTools(), /Authentication failed for HTTP server "parentrag"/);
    } finally {
      await client.close();
    }
  });
}
