// Helpers shared by the inspector's two views: building elements from
// text (never from HTML, so nothing a document or an answer holds can run
// as code), calling the server, and saying how a call went.

// el returns a new element with the given attributes (class, title, data-*
// and the like) and children: strings become text nodes.
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value !== undefined && value !== null && value !== false) node.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child !== undefined && child !== null) node.append(child);
  }
  return node;
}

// tokenKey is where the bearer token is kept for the browser tab's life.
const tokenKey = "parentrag.token";

// initToken restores the token field from the tab's session and keeps it.
export function initToken() {
  const input = document.getElementById("token");
  input.value = sessionStorage.getItem(tokenKey) || "";
  input.addEventListener("change", () => sessionStorage.setItem(tokenKey, input.value.trim()));
}

// post sends body as JSON to path (relative to the page), with the bearer
// token when one is entered, and returns the decoded answer; it throws an
// Error carrying the server's message when the answer is not 2xx.
export async function post(path, body) {
  const headers = { "Content-Type": "application/json" };
  const token = document.getElementById("token").value.trim();
  if (token) headers.Authorization = "Bearer " + token;
  const resp = await fetch(path, { method: "POST", headers, body: JSON.stringify(body) });
  let data = null;
  try {
    data = await resp.json();
  } catch {
    // Not JSON: the status says what happened.
  }
  if (!resp.ok) {
    const msg = data && data.error ? data.error : resp.statusText;
    const hint = resp.status === 401 ? " (enter a bearer token at the top right)" : "";
    throw new Error(`${resp.status}: ${msg}${hint}`);
  }
  return data;
}

// status shows msg in the status line of a view, as an error when isError.
export function status(id, msg, isError = false) {
  const node = document.getElementById(id);
  node.textContent = msg;
  node.classList.toggle("error", isError);
}

// numberField is the value of a number input, or undefined when it is empty.
export function numberField(id) {
  const v = document.getElementById(id).value.trim();
  return v === "" ? undefined : Number(v);
}

// codePoints splits a string into its code points: the server's offsets
// count code points, where JavaScript strings count UTF-16 units.
export function codePoints(text) {
  return Array.from(text);
}
