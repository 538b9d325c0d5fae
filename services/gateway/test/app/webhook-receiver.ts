import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST the receiver got. */
export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  json: any;
  /** The status it answered (0 when it never answered). */
  answered: number;
}

/** Longest a hanging request is held before its connection is cut (ms): the receiver stops by itself. */
const HANG_MS = 60_000;

/** What the receiver does with the next request: answer with a status, or never answer. */
export type Behaviour = number | 'hang';

/**
 * A local webhook receiver on 127.0.0.1 for tests: records every request and answers each with
 * the next queued behaviour (default 200).
 */
export class Receiver {
  readonly received: Received[] = [];
  readonly plan: Behaviour[] = [];
  private server!: Server;
  url = '';

  static async start(): Promise<Receiver> {
    const r = new Receiver();
    r.server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        const behaviour = r.plan.shift() ?? 200;
        const rec: Received = { headers: req.headers, body, json: body ? JSON.parse(body) : undefined, answered: 0 };
        r.received.push(rec);
        if (behaviour === 'hang') {
          // never answered; the connection is cut after HANG_MS at the latest (or on close)
          setTimeout(() => res.destroy(), HANG_MS).unref();
          return;
        }
        rec.answered = behaviour;
        res.writeHead(behaviour).end('ok');
      });
    });
    await new Promise<void>((resolve) => r.server.listen(0, '127.0.0.1', resolve));
    r.url = `http://127.0.0.1:${(r.server.address() as AddressInfo).port}/hook`;
    return r;
  }

  /** Waits until `n` requests arrived (or rejects after `ms`). */
  async until(n: number, ms = 3_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (this.received.length < n) {
      if (Date.now() > deadline) throw new Error(`receiver got ${this.received.length} of ${n} requests`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
