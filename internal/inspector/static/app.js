// The inspector page: two views, chosen by the address's #fragment.
import { initToken } from "./dom.js";
import { initQuery } from "./query.js";
import { initPreview } from "./preview.js";

const views = ["query", "preview"];

// show displays the view the fragment names (the query view by default).
function show() {
  const current = views.includes(location.hash.slice(1)) ? location.hash.slice(1) : "query";
  for (const v of views) {
    document.getElementById(v).hidden = v !== current;
    document.getElementById("tab-" + v).setAttribute("aria-selected", String(v === current));
  }
}

initToken();
initQuery();
initPreview();
window.addEventListener("hashchange", show);
show();
