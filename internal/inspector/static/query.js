// The query view: POST /v1/retrieve, and each returned parent shown as the
// client's LLM receives it, with the children that matched highlighted.
import { el, post, status, numberField, codePoints } from "./dom.js";

// ellipsisLength is the length in code points of " … ", which joins the
// kept parts of a parent trimmed to a budget.
const ellipsisLength = 3;

export function initQuery() {
  document.getElementById("query-form").addEventListener("submit", (event) => {
    event.preventDefault();
    retrieve();
  });
}

// request is the body of /v1/retrieve the form describes; empty fields
// are left out, so the server's defaults apply.
function request() {
  const body = { query: document.getElementById("q").value };
  const fields = { maxParents: "max-parents", childTopK: "child-top-k", budget: "budget" };
  for (const [name, id] of Object.entries(fields)) {
    const v = numberField(id);
    if (v !== undefined) body[name] = v;
  }
  const mode = document.getElementById("mode").value;
  if (mode) body.mode = mode;
  return body;
}

// retrieve asks the server and shows its answer, or why there is none.
async function retrieve() {
  const button = document.querySelector("#query-form button");
  const results = document.getElementById("results");
  button.disabled = true;
  status("query-status", "Retrieving…");
  try {
    const answer = await post("../v1/retrieve", request());
    results.replaceChildren(...answer.results.map(resultCard));
    document.getElementById("query-legend").hidden = answer.results.length === 0;
    document.getElementById("raw-json").textContent = JSON.stringify(answer, null, 2);
    document.getElementById("raw").hidden = false;
    const n = answer.results.length;
    status("query-status", `${n} ${n === 1 ? "parent" : "parents"} from revision ${answer.revision}`);
  } catch (err) {
    results.replaceChildren();
    document.getElementById("query-legend").hidden = true;
    document.getElementById("raw").hidden = true;
    status("query-status", err.message, true);
  } finally {
    button.disabled = false;
  }
}

// resultCard shows one returned parent: rank, score, document, heading
// path, its text with the matching children marked, and the matches.
function resultCard(r, i) {
  const card = el("li", { class: "result", "data-parent-id": r.parentId },
    el("div", { class: "result-head" },
      el("span", { class: "rank" }, `#${i + 1}`),
      el("span", { class: "score", title: "the parent's score, aggregated from its children's" }, `score ${r.score.toFixed(3)}`),
      el("span", { class: "doc-title" }, r.title ? `${r.title} (${r.docId})` : r.docId),
      el("span", { class: "meta" }, describe(r))),
  );
  if (r.headingPath && r.headingPath.length) {
    card.append(el("ol", { class: "heading-path", "aria-label": "heading path" }, r.headingPath.map((h) => el("li", {}, h))));
  }
  card.append(el("pre", { class: "parent-text" }, highlighted(r)), matchTable(r, card));
  return card;
}

// describe is the line of facts about a parent beside its title.
function describe(r) {
  const facts = [`level ${r.level}`, `parent ${r.parentId}`, `at ${r.start}`];
  if (r.pages) facts.push(r.pages.first === r.pages.last ? `page ${r.pages.first}` : `pages ${r.pages.first}–${r.pages.last}`);
  if (r.trimmed) facts.push("trimmed to the budget");
  else if (r.spans && r.spans.length) facts.push(`${r.spans.length} kept ${r.spans.length === 1 ? "span" : "spans"}`);
  return facts.join(" · ");
}

// textRanges maps a match's parent-relative range [start, end) to ranges
// of the result's text: the same range when the text is the whole parent,
// else its parts inside the kept spans, which the text holds in order,
// joined by the ellipsis. A match that could not be located (start -1)
// or lies outside what was kept has none.
export function textRanges(r, start, end) {
  if (start < 0 || end <= start) return [];
  if (!r.spans || r.spans.length === 0) return [[start, end]];
  const out = [];
  let offset = 0;
  for (const s of r.spans) {
    const a = Math.max(start, s.start);
    const b = Math.min(end, s.end);
    if (b > a) out.push([offset + a - s.start, offset + b - s.start]);
    offset += s.end - s.start + ellipsisLength;
  }
  return out;
}

// highlighted returns the parent's text as nodes, each run covered by
// matching children a <mark> naming them (best first), the rest text.
function highlighted(r) {
  const chars = codePoints(r.text);
  const ranges = r.matches.map((m) => textRanges(r, m.start, m.end));
  const cuts = new Set([0, chars.length]);
  for (const list of ranges) {
    for (const [a, b] of list) {
      cuts.add(Math.min(a, chars.length));
      cuts.add(Math.min(b, chars.length));
    }
  }
  const points = [...cuts].sort((a, b) => a - b);
  const nodes = [];
  for (let k = 0; k + 1 < points.length; k++) {
    const [a, b] = [points[k], points[k + 1]];
    const text = chars.slice(a, b).join("");
    const covering = ranges.flatMap((list, i) => (list.some(([s, e]) => s <= a && b <= e) ? [i] : []));
    nodes.push(covering.length ? markOf(r, covering, text) : text);
  }
  return nodes;
}

// markOf marks text that the matches at indexes covering hold, the more
// strongly the closer the best of them scores to the parent's best match.
function markOf(r, covering, text) {
  const classes = ["hit"];
  if (covering[0] === 0) classes.push("best");
  if (covering.length > 1) classes.push("multi");
  const title = covering.map((i) => `child ${r.matches[i].childId} · score ${r.matches[i].score.toFixed(3)}`).join("\n");
  const mark = el("mark", { class: classes.join(" "), "data-matches": covering.join(" "), title }, text);
  const best = r.matches[0].score;
  mark.style.setProperty("--w", String(best > 0 ? Math.max(0, r.matches[covering[0]].score / best) : 1));
  return mark;
}

// matchTable lists the matching children: score, how they were found and
// where they are in the parent; hovering a row outlines its text in card.
function matchTable(r, card) {
  const hybrid = r.matches.some((m) => m.foundBy);
  const rows = r.matches.map((m, i) => {
    const located = textRanges(r, m.start, m.end).length > 0;
    const where = m.start < 0 ? "not located in the parent" : located ? `${m.start}–${m.end}` : `${m.start}–${m.end}, outside the kept text`;
    const row = el("tr", { "data-match": i },
      el("td", {}, String(i + 1)),
      el("td", {}, el("code", {}, m.childId)),
      el("td", {}, m.score.toFixed(3)),
      el("td", { class: located ? "" : "unlocated" }, where),
      hybrid ? el("td", {}, m.foundBy || "") : null);
    row.addEventListener("mouseenter", () => focusMatch(card, i, true));
    row.addEventListener("mouseleave", () => focusMatch(card, i, false));
    return row;
  });
  return el("table", { class: "matches" },
    el("thead", {}, el("tr", {}, ["", "matching child", "score", "code points in the parent", hybrid ? "found by" : null].map((h) => h === null ? null : el("th", {}, h)))),
    el("tbody", {}, rows));
}

// focusMatch outlines, or stops outlining, the marks of match i in card.
function focusMatch(card, i, on) {
  for (const mark of card.querySelectorAll("mark.hit")) {
    if (mark.dataset.matches.split(" ").includes(String(i))) mark.classList.toggle("focus", on);
  }
}
