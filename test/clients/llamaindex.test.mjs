// A LlamaIndex.TS BaseRetriever, subclassed exactly as
// docs/protocols/llamaindex.md shows, against /v1/retrieve.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";

import { TextNode } from "llamaindex";

import { authHeaders, QUERIES, retrieve, startServer, WRONG_TOKEN } from "./helpers.mjs";
import { ParentragRetriever } from "./llamaindex-retriever.mjs";

let server;
before(async () => {
  server = await startServer();
});
after(() => server?.stop());

test("the documented subclass is the one tested", () => {
  const subclass = readFileSync(new URL("./llamaindex-retriever.mjs", import.meta.url), "utf8").trim();
  const page = readFileSync(new URL("../../docs/protocols/llamaindex.md", import.meta.url), "utf8");
  assert.ok(page.includes(subclass), "docs/protocols/llamaindex.md must show llamaindex-retriever.mjs verbatim");
});

test("BaseRetriever subclass returns the parents of /v1/retrieve", async () => {
  const retriever = new ParentragRetriever({ url: server.baseURL, headers: authHeaders() });
  for (const query of QUERIES) {
    const nodes = await retriever.retrieve(query);
    const want = await retrieve(server.baseURL, { query });
    assert.deepEqual(
      nodes.map(({ node, score }) => ({ parentId: node.id_, docId: node.metadata.docId, title: node.metadata.title, text: node.text, score })),
      want.map(({ parentId, docId, title, text, score }) => ({ parentId, docId, title: title ?? "", text, score })),
      query,
    );
    for (const { node } of nodes) {
      assert.ok(node instanceof TextNode, "each result is a TextNode");
      assert.match(node.metadata.revision, /^[0-9a-f]{16}$/);
    }
  }
});

test("maxParents and a QueryBundle reach /v1/retrieve", async () => {
  const retriever = new ParentragRetriever({ url: server.baseURL + "/", maxParents: 1, headers: authHeaders() });
  const nodes = await retriever.retrieve({ query: QUERIES[0] });
  const want = await retrieve(server.baseURL, { query: QUERIES[0], maxParents: 1 });
  assert.equal(want.length, 1);
  assert.deepEqual(
    nodes.map(({ node }) => node.id_),
    want.map((r) => r.parentId),
  );
});

for (const [who, token] of [
  ["no token", ""],
  ["a wrong token", WRONG_TOKEN],
]) {
  test(`the BaseRetriever subclass with ${who} is refused`, async () => {
    const retriever = new ParentragRetriever({ url: server.baseURL, headers: authHeaders(token) });
    await assert.rejects(retriever.retrieve(QUERIES[0]), /^Error: parentrag: 401 /);
  });
}
