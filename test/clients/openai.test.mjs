// The OpenAI Node SDK's vector-store calls against /v1/vector_stores.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import OpenAI, { NotFoundError } from "openai";

import { CORPUS, parentsOf, QUERIES, retrieve, startServer, TOKEN } from "./helpers.mjs";

let server;
let client;
before(async () => {
  server = await startServer();
  // The SDK sends its API key as the bearer token the server accepts.
  client = new OpenAI({ baseURL: `${server.baseURL}/v1`, apiKey: TOKEN, maxRetries: 0 });
});
after(() => server?.stop());

test("vectorStores.list and retrieve show the one store", async () => {
  const stores = [];
  for await (const store of client.vectorStores.list()) stores.push(store);
  assert.deepEqual(stores.map((s) => s.id), [CORPUS]);
  assert.equal(stores[0].object, "vector_store");
  assert.ok(stores[0].file_counts.completed > 0);
  const store = await client.vectorStores.retrieve(CORPUS);
  assert.equal(store.id, CORPUS);
  assert.equal(store.status, "completed");
});

test("vectorStores.search returns the parents of /v1/retrieve", async () => {
  for (const query of QUERIES) {
    const page = await client.vectorStores.search(CORPUS, { query, max_num_results: 5 });
    const want = await retrieve(server.baseURL, { query, maxParents: 5 });
    assert.deepEqual(
      page.data.map((r) => ({ parentId: r.attributes.parentId, docId: r.file_id, text: r.content[0].text })),
      parentsOf(want),
      query,
    );
    assert.deepEqual(
      page.data.map((r) => r.score),
      want.map((r) => r.score),
    );
  }
});

test("vectorStores.search maps an eq filter on file_id", async () => {
  const query = QUERIES[0];
  const [best] = await retrieve(server.baseURL, { query });
  const page = await client.vectorStores.search(CORPUS, {
    query,
    filters: { type: "eq", key: "file_id", value: best.docId },
  });
  const want = await retrieve(server.baseURL, { query, filter: { docId: best.docId } });
  assert.deepEqual(page.data.map((r) => r.attributes.parentId), want.map((r) => r.parentId));
});

test("an unknown store and an unmappable filter are refused in OpenAI's error shape", async () => {
  await assert.rejects(client.vectorStores.search("vs_missing", { query: "x" }), (err) => {
    assert.ok(err instanceof NotFoundError);
    assert.equal(err.status, 404);
    assert.match(err.message, /no vector store "vs_missing"/);
    return true;
  });
  await assert.rejects(
    client.vectorStores.search(CORPUS, { query: "x", filters: { type: "or", filters: [{ type: "eq", key: "a", value: "b" }] } }),
    (err) => err.status === 400 && err.type === "invalid_request_error" && /cannot be mapped/.test(err.message),
  );
});
