import { request, type ClientRequest, type IncomingMessage } from 'node:http';

/** One parsed SSE frame: an event (`id`, `event`, `data`) or a comment line. */
export interface Frame {
  id?: string;
  event?: string;
  data?: any;
  comment?: string;
  /** `performance.now()` when the frame was parsed. */
  at: number;
}

/**
 * A minimal Server-Sent Events client over a real HTTP connection, for tests: parses frames as
 * they arrive (`id:`, `event:`, `data:` JSON, `: comment`), and lets a test wait for them.
 */
export class SseClient {
  readonly frames: Frame[] = [];
  status = 0;
  headers: IncomingMessage['headers'] = {};
  body = '';
  ended = false;
  res: IncomingMessage | undefined;
  private buffer = '';
  private waiters: Array<() => void> = [];

  private constructor(readonly req: ClientRequest) {}

  /** Opens `GET url` with `headers`; resolves once the response head arrived. */
  static open(url: string, headers: Record<string, string>): Promise<SseClient> {
    return new Promise((resolve, reject) => {
      const req = request(url, { headers: { accept: 'text/event-stream', ...headers } });
      const client = new SseClient(req);
      req.on('response', (res) => {
        client.res = res;
        client.status = res.statusCode ?? 0;
        client.headers = res.headers;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => client.push(chunk));
        res.on('end', () => client.finish());
        res.on('close', () => client.finish());
        res.on('error', () => client.finish());
        resolve(client);
      });
      req.on('error', reject);
      req.end();
    });
  }

  private finish(): void {
    this.ended = true;
    this.wake();
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  private push(chunk: string): void {
    if (this.status !== 200) {
      this.body += chunk;
      this.wake();
      return;
    }
    this.buffer += chunk;
    let i: number;
    while ((i = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, i);
      this.buffer = this.buffer.slice(i + 2);
      const frame: Frame = { at: performance.now() };
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) frame.comment = line.slice(1).trim();
        else if (line.startsWith('id: ')) frame.id = line.slice(4);
        else if (line.startsWith('event: ')) frame.event = line.slice(7);
        else if (line.startsWith('data: ')) frame.data = JSON.parse(line.slice(6));
      }
      this.frames.push(frame);
    }
    this.wake();
  }

  /** The event frames received so far (comments left out). */
  get events(): Frame[] {
    return this.frames.filter((f) => f.event !== undefined);
  }

  /** Waits until `pred` holds (checked on every frame and at the end), or rejects after `ms`. */
  async until(pred: (c: SseClient) => boolean, ms = 3_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!pred(this)) {
      if (Date.now() > deadline) throw new Error(`SSE wait timed out; frames: ${JSON.stringify(this.frames.map((f) => f.id ?? f.comment))}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 20);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** Closes the connection from the client side. */
  close(): void {
    this.req.destroy();
    this.res?.destroy();
  }
}
