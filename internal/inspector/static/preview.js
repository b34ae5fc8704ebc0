// The policy preview: a document and one or two ChunkingPolicies sent to
// the server, and each policy's parents and children drawn over the text,
// with their counts and size histograms, side by side.
import { el, post, status, codePoints } from "./dom.js";

// bins is how many bars a size histogram has.
const bins = 12;

export function initPreview() {
  document.getElementById("preview-form").addEventListener("submit", (event) => {
    event.preventDefault();
    preview();
  });
}

// preview asks the server to cut the document and draws its answer.
async function preview() {
  const button = document.querySelector("#preview-form button");
  const policies = [document.getElementById("policy-a").value];
  const second = document.getElementById("policy-b").value;
  if (second.trim() !== "") policies.push(second);
  button.disabled = true;
  status("preview-status", "Cutting…");
  try {
    const answer = await post("preview", {
      name: document.getElementById("doc-name").value.trim(),
      document: document.getElementById("doc-text").value,
      policies,
    });
    draw(answer);
    status("preview-status", `${answer.name}, read as ${answer.format}: ${answer.length} characters`);
  } catch (err) {
    document.getElementById("layouts").replaceChildren();
    status("preview-status", err.message, true);
  } finally {
    button.disabled = false;
  }
}

// draw shows each layout in its column; the histograms of one level share
// their scale across columns, so the policies compare at a glance.
function draw(answer) {
  const chars = codePoints(answer.text);
  const longest = (level) => answer.layouts.reduce((m, l) => l[level].reduce((n, u) => Math.max(n, u.length), m), 1);
  const scale = { parents: longest("parents"), children: longest("children") };
  const names = ["A", "B"];
  document.getElementById("layouts").replaceChildren(
    ...answer.layouts.map((l, i) => column(`Policy ${names[i]}`, l, chars, scale)));
}

// column is one policy's summary, histograms and cut text.
function column(name, l, chars, scale) {
  return el("section", { class: "layout", "data-policy": name },
    el("h2", {}, name),
    summary(l),
    el("div", { class: "histograms" },
      histogram(`${l.levels.at(-2)} sizes (${l.lengthUnit})`, "parents", l.parents, scale.parents),
      histogram(`${l.levels.at(-1)} sizes (${l.lengthUnit})`, "children", l.children, scale.children)),
    el("div", { class: "legend" },
      el("span", { class: "swatch-p" }, `P: where a ${l.levels.at(-2).toLowerCase()} starts, ⟧ where it ends`),
      el("span", { class: "swatch-a" }, l.levels.at(-1).toLowerCase()),
      el("span", { class: "swatch-b" }, "the next one"),
      el("span", { class: "swatch-o" }, "overlap")),
    el("div", { class: "cut" }, cutText(chars, l)));
}

// plural is a level's name for several of its units.
function plural(level) {
  const name = level.toLowerCase();
  return name === "child" ? "children" : name + "s";
}

// summary lists the policy's shape, counts and sizes.
function summary(l) {
  const rows = [
    ["strategy", l.strategy],
    ["levels", l.levels.join(" › ")],
    [plural(l.levels.at(-2)), sizes(l.parents, l.lengthUnit)],
    [plural(l.levels.at(-1)), sizes(l.children, l.lengthUnit)],
  ];
  if (l.ancestors > 0) rows.push(["larger units", String(l.ancestors)]);
  return el("dl", { class: "summary" }, rows.flatMap(([k, v]) => [el("dt", {}, k), el("dd", { "data-summary": k }, v)]));
}

// sizes says how many units there are and how long they are.
function sizes(units, unit) {
  if (units.length === 0) return "0";
  const lengths = units.map((u) => u.length).sort((a, b) => a - b);
  const median = lengths[Math.floor(lengths.length / 2)];
  return `${units.length}: ${lengths[0]} to ${lengths.at(-1)} ${unit.toLowerCase()}, median ${median}`;
}

// histogram draws how many units fall in each of bins equal ranges of
// [0, top].
function histogram(title, kind, units, top) {
  const counts = new Array(bins).fill(0);
  for (const u of units) counts[Math.min(bins - 1, Math.floor((u.length / top) * bins))]++;
  const most = counts.reduce((m, n) => Math.max(m, n), 1);
  const bars = counts.map((n, i) => {
    const bar = el("div", { class: "bar", title: `${n} of length ${Math.round((i * top) / bins)}–${Math.round(((i + 1) * top) / bins)}` });
    bar.style.setProperty("--h", String((100 * n) / most));
    return bar;
  });
  return el("figure", { class: `histogram ${kind}` },
    el("h3", {}, title),
    el("div", { class: "bars", "data-count": units.length }, bars),
    el("div", { class: "axis" }, el("span", {}, "0"), el("span", {}, String(top))));
}

// cutText returns the document's text as nodes: each run a span coloured
// by the children that hold it (alternating, another colour where
// children overlap, none where no child does), with a marker where each
// parent starts and ends. Units whose place is unknown are not drawn.
function cutText(chars, l) {
  const events = boundaryEvents(l);
  const points = [...new Set([0, chars.length, ...events.keys()])].filter((p) => p <= chars.length).sort((a, b) => a - b);
  const active = new Set();
  const nodes = [];
  for (let k = 0; k < points.length; k++) {
    const at = events.get(points[k]) || { starts: [], ends: [], childStarts: [], childEnds: [] };
    for (const c of at.childEnds) active.delete(c);
    for (const p of at.ends) nodes.push(el("span", { class: "pend", "data-parent": p, title: `end of ${l.levels.at(-2).toLowerCase()} ${p + 1}` }, "⟧"));
    for (const p of at.starts) nodes.push(parentMarker(l, p));
    for (const c of at.childStarts) active.add(c);
    if (k + 1 < points.length) nodes.push(run(chars.slice(points[k], points[k + 1]).join(""), active, l));
  }
  return nodes;
}

// boundaryEvents maps each code-point offset to the parents and children
// that start or end there.
function boundaryEvents(l) {
  const events = new Map();
  const at = (p) => {
    if (!events.has(p)) events.set(p, { starts: [], ends: [], childStarts: [], childEnds: [] });
    return events.get(p);
  };
  l.parents.forEach((u, i) => {
    if (u.start < 0) return;
    at(u.start).starts.push(i);
    at(u.end).ends.push(i);
  });
  l.children.forEach((u, i) => {
    if (u.start < 0) return;
    at(u.start).childStarts.push(i);
    at(u.end).childEnds.push(i);
  });
  return events;
}

// parentMarker is the label where parent p starts.
function parentMarker(l, p) {
  const u = l.parents[p];
  const path = u.headingPath && u.headingPath.length ? ` · ${u.headingPath.join(" › ")}` : "";
  const title = `${l.levels.at(-2).toLowerCase()} ${p + 1} · ${u.length} ${l.lengthUnit.toLowerCase()}${path}`;
  return el("span", { class: "pstart", "data-parent": p, title }, `P${p + 1}`);
}

// run is one stretch of text held by the same children.
function run(text, active, l) {
  if (active.size === 0) return el("span", { class: "gap" }, text);
  const ids = [...active].sort((a, b) => a - b);
  const cls = ids.length > 1 ? "child overlap" : `child c${ids[0] % 2}`;
  const title = ids.map((c) => `${l.levels.at(-1).toLowerCase()} ${c + 1} · ${l.children[c].length} ${l.lengthUnit.toLowerCase()} · in ${l.levels.at(-2).toLowerCase()} ${l.children[c].parent + 1}`).join("\n");
  return el("span", { class: cls, "data-children": ids.join(" "), title }, text);
}
