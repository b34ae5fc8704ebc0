import { BaseRetriever, extractText, TextNode } from "llamaindex";

// ParentragRetriever retrieves parents from a parentrag Retriever Service.
export class ParentragRetriever extends BaseRetriever {
  constructor({ url, maxParents, filter, headers = {} }) {
    super();
    this.url = url.replace(/\/+$/, "") + "/v1/retrieve";
    this.body = Object.fromEntries(Object.entries({ maxParents, filter }).filter(([, v]) => v !== undefined));
    this.headers = headers;
  }

  async _retrieve({ query }) {
    const resp = await fetch(this.url, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...this.headers },
      body: JSON.stringify({ query: extractText(query), ...this.body }),
      signal: AbortSignal.timeout(10_000),
    });
    if (!resp.ok) throw new Error(`parentrag: ${resp.status} ${await resp.text()}`);
    const answer = await resp.json();
    return answer.results.map((r) => ({
      node: new TextNode({
        id_: r.parentId,
        text: r.text,
        metadata: { docId: r.docId, title: r.title ?? "", headingPath: r.headingPath ?? [], level: r.level, revision: answer.revision },
      }),
      score: r.score,
    }));
  }
}
