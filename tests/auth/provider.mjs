// A real authorization server for the authorization tests: oidc-provider (a certified
// OpenID Connect provider) on 127.0.0.1, on a port of its own choosing or the one given.
//
//   node tests/auth/provider.mjs [PORT]
//
// It prints one JSON line, {"issuer": "http://127.0.0.1:PORT", "client_metadata_url": URL},
// once it listens, and stops
// when its standard input closes (the test that started it went away) or after 10 minutes.
//
// Configured for MCP: resource indicators (RFC 8707; any http://127.0.0.1 resource is a
// resource server with the scopes below, its tokens bound to it as their audience), the
// client credentials grant, introspection (RFC 7662), dynamic registration, PKCE. Tokens
// of the clients `jwt-*` are JWTs (RFC 9068, ES256); those of `opaque-*` are opaque, to be
// introspected by the confidential client `resource-server`. Client ID metadata documents
// are taken too: one, for a native client with a loopback redirect URI, is served at
// `client_metadata_url` by an https server of its own (a self-signed certificate, which this
// authorization server alone is told to accept).
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import Provider from 'oidc-provider';
import selfsigned from 'selfsigned';

const SCOPES = 'mcp notes:read notes:write';
// What clients may ask for: the resource's scopes, and a refresh token.
const ALL_SCOPES = `${SCOPES} offline_access`;
const secret = (id) => `${id}-secret`;
const client = (id, scope = SCOPES) => ({
  client_id: id,
  client_secret: secret(id),
  grant_types: ['client_credentials'],
  response_types: [],
  redirect_uris: [],
  scope,
});

// Signing keys made at start: an ES256 key for access tokens, an RS256 one for ID tokens.
const jwk = (type, options, alg) => ({
  ...generateKeyPairSync(type, options).privateKey.export({ format: 'jwk' }),
  kid: randomUUID(),
  alg,
  use: 'sig',
});
const newKeys = () => [jwk('rsa', { modulusLength: 2048 }, 'RS256'), jwk('ec', { namedCurve: 'P-256' }, 'ES256')];

// The https server of the client ID metadata document; this process fetches from it.
process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
const pems = await selfsigned.generate([{ name: 'commonName', value: '127.0.0.1' }], {
  days: 1,
  extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
});
const documents = https.createServer({ key: pems.private, cert: pems.cert });
await new Promise((listening) => documents.listen(0, '127.0.0.1', listening));
const clientMetadataUrl = `https://127.0.0.1:${documents.address().port}/clients/mcp-cli.json`;
documents.on('request', (req, res) => {
  if (req.url !== '/clients/mcp-cli.json') {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
    client_id: clientMetadataUrl,
    client_name: 'mcp (command line)',
    application_type: 'native',
    redirect_uris: ['http://127.0.0.1/callback'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  }));
});

const server = http.createServer();
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  const { port } = server.address();
  const issuer = `http://127.0.0.1:${port}`;
  const provider = (keys) => new Provider(issuer, {
    clients: [
      client('jwt-alice'),
      client('jwt-bob'),
      client('jwt-reader', 'mcp notes:read'),
      client('opaque-alice'),
      { client_id: 'resource-server', client_secret: secret('resource-server'), grant_types: [], response_types: [], redirect_uris: [] },
    ],
    scopes: ALL_SCOPES.split(' '),
    features: {
      // The login and consent pages a test fills in as the user (any login and password).
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      registration: { enabled: true },
      clientIdMetadataDocument: { enabled: true, ack: 'draft-02' },
      resourceIndicators: {
        enabled: true,
        defaultResource: (ctx, client, oneOf) => oneOf,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resource, client) => {
          if (!resource.startsWith('http://127.0.0.1:')) throw new Error(`unknown resource ${resource}`);
          const opaque = client.clientId.startsWith('opaque-');
          return {
            scope: SCOPES,
            audience: resource,
            accessTokenTTL: 300,
            accessTokenFormat: opaque ? 'opaque' : 'jwt',
            ...(opaque ? {} : { jwt: { sign: { alg: 'ES256' } } }),
          };
        },
      },
    },
    pkce: { required: () => true },
    enabledJWA: { clientAuthSigningAlgValues: ['ES256', 'RS256'] },
    jwks: { keys },
    // Everything here is on 127.0.0.1, which the provider's SSRF protection refuses to fetch
    // from (the client ID metadata document): its own dispatcher is left out, for tests only.
    fetch: (url, { dispatcher, ...options }) => globalThis.fetch(url, options),
  });
  // POST /rotate: the keys are replaced by new ones (the old ones are no longer published),
  // as an issuer rotating its keys does; the state (clients, tokens) is kept.
  let callback = provider(newKeys()).callback();
  server.on('request', (req, res) => {
    if (req.method === 'POST' && req.url === '/rotate') {
      callback = provider(newKeys()).callback();
      res.writeHead(204).end();
      return;
    }
    callback(req, res);
  });
  process.stdout.write(`${JSON.stringify({ issuer, client_metadata_url: clientMetadataUrl })}\n`);
});

// The test may stop reading: what is printed then is lost, not fatal.
process.stdout.on('error', () => {});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
setTimeout(() => process.exit(0), 10 * 60 * 1000).unref();
