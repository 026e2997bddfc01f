// A real OAuth 2 authorization server for the tests: the npm package `oauth2-mock-server`
// (real RSA keys, real signed JWTs, OpenID discovery, PKCE), with what the tests need on top:
//
// - RFC 8707 resource indicators: a token request's `resource` becomes the token's `aud`;
// - client credentials name their client: `sub` and `client_id` are the client id (or the
//   request's `subject`);
// - RFC 7662 introspection that really introspects: the token's signature, expiry and
//   issuer are checked and its claims answered, for the client `mcp-server` with the secret
//   `introspection-secret` only;
// - the authorization code flow as a client meets it: dynamic client registration (RFC 7591,
//   POST /register, advertised in the metadata), and the scope and resource asked for at
//   /authorize carried into the token;
// - key rotation: POST /test/rotate replaces the signing key (the old one leaves the JWKS);
// - tokens the tests could not get from a well-behaved server: POST /test/token with a JSON
//   body {scope, aud, sub, client_id, expires_in, iss, typ, rogue} (`typ`: the JOSE header's;
//   `rogue`: signed with a key never published);
// - GET /test/stats: how often the JWKS and the introspection endpoint were asked.
//
// Usage: node authorization-server.mjs (with MCP_TEST_NODE_MODULES naming the node_modules
// directory that holds oauth2-mock-server). Prints {"issuer": URL} on one line once it
// listens on a free loopback port; ends when its standard input closes.
import { createServer } from "node:http";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const modules = process.env.MCP_TEST_NODE_MODULES;
if (!modules) {
  console.error("MCP_TEST_NODE_MODULES must name the node_modules holding oauth2-mock-server");
  process.exit(2);
}
const load = (name, file) => import(pathToFileURL(join(modules, name, file)).href);
const { OAuth2Issuer, OAuth2Service, Events } = await load("oauth2-mock-server", "dist/index.mjs");
const { jwtVerify, createLocalJWKSet } = await load("jose", "dist/webapi/index.js");

const stats = { jwks: 0, introspect: 0, token: 0, register: 0, authorize: 0 };
// What each authorization code was issued for: its scope and resource.
const codes = new Map();
let url;
let current; // { issuer, service }

async function makeIssuer() {
  const issuer = new OAuth2Issuer();
  issuer.url = url;
  await issuer.keys.generate("RS256");
  return issuer;
}

async function activate() {
  const issuer = await makeIssuer();
  const service = new OAuth2Service(issuer);
  service.on(Events.BeforeTokenSigning, (token, req) => {
    const body = req.body ?? {};
    const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? "");
    const client = basic
      ? decodeURIComponent(Buffer.from(basic[1], "base64").toString().split(":")[0])
      : body.client_id;
    const granted = body.code !== undefined ? codes.get(body.code) : undefined;
    if (granted) {
      token.payload.scope = body.scope ?? granted.scope;
      token.payload.aud = granted.resource;
    }
    if (body.resource) token.payload.aud = body.resource;
    if (client) token.payload.client_id = client;
    if (body.grant_type === "client_credentials") token.payload.sub = body.subject ?? client;
  });
  service.on(Events.BeforeWellKnownOpenIdConfiguration, (metadata) => {
    metadata.body.registration_endpoint = `${url}/register`;
    metadata.body.scopes_supported = ["openid", "notes:read", "notes:write"];
  });
  service.on(Events.BeforeAuthorizeRedirect, (redirect, req) => {
    stats.authorize += 1;
    const code = redirect.url.searchParams.get("code");
    codes.set(code, { scope: req.query.scope, resource: req.query.resource });
  });
  service.on(Events.BeforeResponse, (response, req) => {
    const granted = req.body?.code !== undefined ? codes.get(req.body.code) : undefined;
    if (granted && response.body.scope === "dummy") response.body.scope = granted.scope;
  });
  current = { issuer, service };
}

async function register(req, res) {
  stats.register += 1;
  const metadata = JSON.parse((await readBody(req)) || "{}");
  send(res, 201, {
    ...metadata,
    client_id: `client-${stats.register}`,
    client_id_issued_at: Math.floor(Date.now() / 1000),
    token_endpoint_auth_method: "none",
  });
}

const rogue = { issuer: null };

function readBody(req) {
  return new Promise((resolve, reject) => {
    let data = "";
    req.setEncoding("utf8");
    req.on("data", (chunk) => (data += chunk));
    req.on("end", () => resolve(data));
    req.on("error", reject);
  });
}

function send(res, status, body) {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}

async function introspect(req, res) {
  stats.introspect += 1;
  const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? "");
  const [id, secret] = basic ? Buffer.from(basic[1], "base64").toString().split(":") : [];
  if (id !== "mcp-server" || secret !== "introspection-secret") {
    return send(res, 401, { error: "invalid_client" });
  }
  const token = new URLSearchParams(await readBody(req)).get("token") ?? "";
  try {
    const keys = createLocalJWKSet({ keys: current.issuer.keys.toJSON() });
    const { payload } = await jwtVerify(token, keys, { issuer: url });
    return send(res, 200, { active: true, token_type: "Bearer", ...payload });
  } catch {
    return send(res, 200, { active: false });
  }
}

async function testToken(req, res) {
  const ask = JSON.parse((await readBody(req)) || "{}");
  let issuer = current.issuer;
  if (ask.rogue) {
    rogue.issuer ??= await makeIssuer();
    issuer = rogue.issuer;
  }
  const token = await issuer.buildToken({
    expiresIn: ask.expires_in ?? 3600,
    scopesOrTransform: (header, payload) => {
      if (ask.typ !== undefined) header.typ = ask.typ;
      payload.sub = ask.sub ?? "ada";
      payload.client_id = ask.client_id ?? "test-client";
      if (ask.scope !== undefined) payload.scope = ask.scope;
      if (ask.aud !== undefined) payload.aud = ask.aud;
      if (ask.iss !== undefined) payload.iss = ask.iss;
    },
  });
  send(res, 200, { access_token: token });
}

const server = createServer((req, res) => {
  const path = new URL(req.url, "http://x").pathname;
  const route = `${req.method} ${path}`;
  const answer = (async () => {
    switch (route) {
      case "GET /jwks":
        stats.jwks += 1;
        return send(res, 200, { keys: current.issuer.keys.toJSON() });
      case "POST /introspect":
        return introspect(req, res);
      case "POST /register":
        return register(req, res);
      case "POST /test/token":
        return testToken(req, res);
      case "POST /test/rotate":
        await activate();
        return send(res, 200, { rotated: true });
      case "GET /test/stats":
        return send(res, 200, stats);
      default:
        if (route === "POST /token") stats.token += 1;
        return current.service.requestHandler(req, res);
    }
  })();
  answer.catch((error) => send(res, 500, { error: String(error) }));
});

server.listen(0, "127.0.0.1", async () => {
  url = `http://127.0.0.1:${server.address().port}`;
  await activate();
  process.stdout.write(`${JSON.stringify({ issuer: url })}\n`);
});

// The test that started this server holds its standard input: when it ends, so does this.
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
