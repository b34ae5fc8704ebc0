import { RemoteRetriever } from "@langchain/community/retrievers/remote";
import { Document } from "@langchain/core/documents";

// ParentragRetriever asks a parentrag Retriever Service's LangChain endpoint.
export class ParentragRetriever extends RemoteRetriever {
  lc_namespace = ["parentrag", "retrievers"];

  createJsonBody(query) {
    return { message: query };
  }

  processJsonResponse(json) {
    return json.response.map((d) => new Document({ pageContent: d.page_content, metadata: d.metadata }));
  }
}
