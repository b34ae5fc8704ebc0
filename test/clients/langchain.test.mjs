// LangChain.js's RemoteRetriever, subclassed exactly as
// docs/protocols/langchain.md shows, against /v1/langchain/retrieve.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";

import { authHeaders, parentsOf, QUERIES, retrieve, startServer } from "./helpers.mjs";
import { ParentragRetriever } from "./parentrag-retriever.mjs";

let server;
before(async () => {
  server = await startServer();
});
after(() => server?.stop());

test("the documented subclass is the one tested", () => {
  const subclass = readFileSync(new URL("./parentrag-retriever.mjs", import.meta.url), "utf8").trim();
  const page = readFileSync(new URL("../../docs/protocols/langchain.md", import.meta.url), "utf8");
  assert.ok(page.includes(subclass), "docs/protocols/langchain.md must show parentrag-retriever.mjs verbatim");
});

test("RemoteRetriever subclass returns the parents of /v1/retrieve", async () => {
  const bearer = authHeaders().Authorization?.replace(/^Bearer /, "");
  const retriever = new ParentragRetriever({ url: `${server.baseURL}/v1/langchain/retrieve`, auth: bearer ? { bearer } : false });
  for (const query of QUERIES) {
    const docs = await retriever.invoke(query);
    const want = await retrieve(server.baseURL, { query });
    assert.deepEqual(
      docs.map((d) => ({ parentId: d.metadata.parentId, docId: d.metadata.docId, text: d.pageContent })),
      parentsOf(want),
      query,
    );
    for (const d of docs) {
      assert.match(d.metadata.revision, /^[0-9a-f]{16}$/);
      assert.equal(typeof d.metadata.score, "number");
      assert.ok(d.metadata.matches.length > 0, "matched children are in the metadata");
    }
  }
});
