// Starts a real `parentrag serve` on an index of the project's docs/ and
// asks it questions the plain way, for the client tests to compare with.
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const moduleRoot = resolve(fileURLToPath(import.meta.url), "..", "..", "..");

// CORPUS is the name the server is started with: its OpenAI vector store id.
export const CORPUS = "docs";

// QUERIES are asked through every client.
export const QUERIES = [
  "How are parents trimmed to a budget?",
  "What happens to the old revision during a rollout?",
  "Which metrics does the query server export?",
];

// TOKEN is the one bearer token the server accepts: it runs with
// `--auth bearer`, the way a Retriever with spec.auth.mode BearerToken does.
export const TOKEN = randomBytes(24).toString("hex");

// WRONG_TOKEN is a token the server does not accept.
export const WRONG_TOKEN = "not-" + TOKEN;

// authHeaders are the headers every request of these tests carries: the
// accepted token, or another one to see it refused.
export function authHeaders(token = TOKEN) {
  return token ? { Authorization: `Bearer ${token}` } : {};
}

// freePort returns a TCP port nobody listens on right now.
function freePort() {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.once("error", fail);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => ok(port));
    });
  });
}

// waitReady polls /readyz until it answers 200, failing after timeoutMs or
// when the server exits.
async function waitReady(baseURL, child, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`parentrag serve exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${baseURL}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((ok) => setTimeout(ok, 100));
  }
  throw new Error(`parentrag serve was not ready at ${baseURL} within ${timeoutMs} ms`);
}

// startServer builds parentrag, indexes docs/ and serves the index as
// Corpus CORPUS on a free port, accepting TOKEN alone. stop() ends the server
// and removes its files.
export async function startServer() {
  const dir = mkdtempSync(join(tmpdir(), "parentrag-clients-"));
  const bin = join(dir, "parentrag");
  const index = join(dir, "index");
  const tokens = join(dir, "tokens");
  mkdirSync(tokens);
  writeFileSync(join(tokens, "clients"), TOKEN + "\n");
  // The image's build flags (make vet and the image build compile with them),
  // so the build finds every package in the Go build cache.
  execFileSync("go", ["build", "-trimpath", "-o", bin, "./cmd/parentrag"], {
    cwd: moduleRoot,
    stdio: "inherit",
    env: { ...process.env, CGO_ENABLED: "0" },
  });
  execFileSync(bin, ["local", "index", "--quiet", "--out", index, join(moduleRoot, "docs")], { stdio: "inherit" });
  const port = await freePort();
  const baseURL = `http://127.0.0.1:${port}`;
  const child = spawn(bin, ["serve", "--index", index, "--corpus", CORPUS, "--addr", `127.0.0.1:${port}`, "--shutdown-delay", "0", "--auth", "bearer", "--auth-token-dir", tokens], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  try {
    await waitReady(baseURL, child, 30_000);
  } catch (err) {
    child.kill();
    throw err;
  }
  return {
    baseURL,
    async stop() {
      const exited = new Promise((ok) => child.once("exit", ok));
      child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// retrieve asks /v1/retrieve with plain fetch and returns its results.
export async function retrieve(baseURL, body) {
  const resp = await fetch(`${baseURL}/v1/retrieve`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...authHeaders() },
    body: JSON.stringify(body),
  });
  if (!resp.ok) throw new Error(`/v1/retrieve ${JSON.stringify(body)}: ${resp.status} ${await resp.text()}`);
  const { results } = await resp.json();
  if (results.length === 0) throw new Error(`/v1/retrieve ${JSON.stringify(body)} found nothing: a useless comparison`);
  return results;
}

// parentsOf reduces results to what every protocol must agree on.
export function parentsOf(results) {
  return results.map(({ parentId, docId, text }) => ({ parentId, docId, text }));
}
