import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, ApiError } from '../src/api/client.js';

/**
 * The web client against answers that do not come from the gateway: a proxy's HTML error page, an
 * empty error, a 200 that is not JSON. Each is an ApiError the page can show, never a SyntaxError.
 */

let server: Server;
let next: { status: number; type: string; body: string };
let base: string;

beforeAll(async () => {
  server = createServer((_req, res) => {
    res.writeHead(next.status, { 'content-type': next.type });
    res.end(next.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** What `login` (a public call) throws against the answer `next`. */
async function loginError(answer: typeof next): Promise<unknown> {
  next = answer;
  return new Api(base, null).login('ada', 'correct horse battery').then(
    () => 'answered',
    (e: unknown) => e,
  );
}

describe('web API client, answers from in front of the gateway', () => {
  it("turns a proxy's HTML 502 into an ApiError with the status", async () => {
    const err = await loginError({ status: 502, type: 'text/html', body: '<html><body><h1>502 Bad Gateway</h1></body></html>' });
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 502, code: 'HTTP_502', message: 'Bad Gateway' });
  });

  it('turns an empty 503 into an ApiError with the status', async () => {
    expect(await loginError({ status: 503, type: 'text/plain', body: '' })).toMatchObject({ status: 503, code: 'HTTP_503' });
  });

  it("keeps the gateway's own error body", async () => {
    const body = { code: 'INVALID_CREDENTIALS', message: 'Invalid username or password', traceId: 't' };
    expect(await loginError({ status: 401, type: 'application/json', body: JSON.stringify(body) })).toMatchObject({ status: 401, body });
  });

  it('refuses a 200 that is not JSON with an ApiError', async () => {
    const err = await loginError({ status: 200, type: 'text/html', body: '<html>index</html>' });
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 200, code: 'NOT_JSON' });
  });
});
