import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, decodeJwt, type JWK } from 'jose';
import Provider from 'oidc-provider';

/** The gateway's registered callback at the test provider (the tests inject it into the app). */
export const REDIRECT = 'http://gateway.test/auth/oidc/callback';
export const CLIENT_ID = 'board-service';
export const CLIENT_SECRET = 'board-service-secret-0123456789';

/** Claims of a provider account, by account id (`sub`). */
export type Accounts = Map<string, Record<string, unknown>>;

/** Rewrites the ID token in a token answer: `change` gets its claims and returns the claims to sign instead. */
export type IdTokenChange = (claims: Record<string, unknown>) => Record<string, unknown>;

/**
 * A certified OpenID provider (`oidc-provider`) on a loopback port in the test process, with one
 * client (the gateway), its dev login and consent forms, and accounts the test defines. Its
 * signing key is the test's, so {@link fetchFor} can re-sign an ID token with changed claims (a
 * wrong nonce, audience or expiry) that only the relying party's claim checks can catch.
 */
export class TestProvider {
  readonly accounts: Accounts = new Map();
  /** When set, the next token answer's ID token is re-signed with these changes. */
  change: IdTokenChange | undefined;

  private constructor(
    private readonly server: Server,
    readonly issuer: string,
    private readonly key: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'],
    private readonly kid: string,
  ) {}

  /** Starts the provider on a free loopback port; `redirect` is the gateway's registered callback. */
  static async start(redirect = REDIRECT): Promise<TestProvider> {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    const jwk: JWK = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
    const p = new TestProvider(server, issuer, privateKey, 'test-key');
    const provider = new Provider(issuer, {
      clients: [{ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: [redirect] }],
      jwks: { keys: [jwk] },
      findAccount: (_ctx: unknown, id: string) => (p.accounts.has(id) ? { accountId: id, claims: () => ({ sub: id, ...p.accounts.get(id) }) } : undefined),
      claims: { openid: ['sub'], profile: ['preferred_username', 'name'], email: ['email', 'email_verified'] },
      conformIdTokenClaims: false,
      pkce: { required: () => true },
      features: { devInteractions: { enabled: true } },
      cookies: { keys: ['test-provider-cookie-key'] },
      ttl: { Interaction: 600, Session: 600, Grant: 600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
    });
    server.on('request', provider.callback());
    return p;
  }

  /** The gateway's HTTP client: every request passes, except that a token answer's ID token is re-signed with {@link change} when set. */
  readonly fetchFor: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!this.change || !url.endsWith('/token') || !res.ok) return res;
    const body = (await res.json()) as Record<string, unknown>;
    const claims = this.change(decodeJwt(String(body.id_token)) as Record<string, unknown>);
    this.change = undefined;
    body.id_token = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: this.kid }).sign(this.key);
    return new Response(JSON.stringify(body), { status: res.status, headers: { 'content-type': 'application/json' } });
  };

  /**
   * Signs `account` in at the provider as a browser would, from the gateway's redirect `location`:
   * follows the redirects, fills in the dev login and consent forms, and returns the URL the
   * provider sends the browser back to (the gateway's callback with `code` and `state`).
   */
  async signIn(location: string, account: string): Promise<URL> {
    const jar = new Map<string, string>();
    const go = async (url: string, form?: string): Promise<Response> => {
      const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
      const res = await fetch(url, {
        redirect: 'manual', method: form === undefined ? 'GET' : 'POST',
        headers: { cookie, ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) }, body: form,
      });
      for (const c of res.headers.getSetCookie()) {
        const kv = c.split(';')[0]!;
        jar.set(kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1));
      }
      return res;
    };
    let url = location;
    for (let step = 0; step < 10; step++) {
      if (url.startsWith(REDIRECT)) return new URL(url);
      let res = await go(url);
      if (res.status === 200) {
        const html = await res.text();
        const action = /action="([^"]+)"/.exec(html)?.[1];
        const prompt = /name="prompt" value="([^"]+)"/.exec(html)?.[1];
        if (!action || !prompt) throw new Error(`unexpected provider page: ${html.slice(0, 200)}`);
        res = await go(action, prompt === 'login' ? `prompt=login&login=${encodeURIComponent(account)}&password=any` : `prompt=${prompt}`);
      }
      const next = res.headers.get('location');
      if (!next) throw new Error(`provider answered ${res.status} without a redirect`);
      url = new URL(next, this.issuer).href;
    }
    throw new Error('too many redirects at the provider');
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
