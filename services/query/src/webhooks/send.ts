import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { addressRefusal, guardedLookup, type TargetPolicy } from './ssrf.js';

/** Timeout of one delivery attempt: 10 s from connect to the end of the answer. */
export const ATTEMPT_TIMEOUT_MS = 10_000;

/** Outcome of one attempt: the answer's status (absent when none came), its duration and the error. */
export interface AttemptOutcome {
  ok: boolean;
  status_code?: number;
  duration_ms: number;
  error?: string;
}

/** One signed POST to make. */
export interface SignedPost {
  url: string;
  /** The event id: `webhook-id`, the same on every attempt. */
  id: string;
  body: string;
  secret: string;
  at: Date;
}

/**
 * The Standard Webhooks headers of a delivery: `webhook-id`, `webhook-timestamp` (unix
 * seconds) and `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">` made with the
 * `standardwebhooks` package from the `whsec_…` secret.
 */
export function signatureHeaders(post: Pick<SignedPost, 'id' | 'body' | 'secret' | 'at'>): Record<string, string> {
  return {
    'webhook-id': post.id,
    'webhook-timestamp': String(Math.floor(post.at.getTime() / 1000)),
    'webhook-signature': new StandardWebhook(post.secret).sign(post.id, post.at, post.body),
  };
}

/** Sends one delivery attempt; never throws. */
export type Sender = (post: SignedPost) => Promise<AttemptOutcome>;

/**
 * The real sender: POSTs the envelope as JSON with the signature headers over node:http(s),
 * connecting only to addresses the SSRF policy allows (checked on the resolved address), with a
 * `timeoutMs` budget for the whole attempt. 2xx = delivered; any other status, a refusal, a
 * network error or the timeout is a failed attempt (answer bodies are read and dropped).
 */
export function httpSender(policy: TargetPolicy, timeoutMs = ATTEMPT_TIMEOUT_MS): Sender {
  const lookup = guardedLookup(policy);
  return (post) =>
    new Promise<AttemptOutcome>((resolve) => {
      const started = performance.now();
      const done = (o: Omit<AttemptOutcome, 'duration_ms'>) => resolve({ ...o, duration_ms: Math.round(performance.now() - started) });
      let url: URL;
      try {
        url = new URL(post.url);
      } catch {
        return done({ ok: false, error: 'invalid URL' });
      }
      const host = url.hostname.replace(/^\[|\]$/g, '');
      if (isIP(host)) {
        const why = addressRefusal(host, host, policy);
        if (why) return done({ ok: false, error: `refused: ${why}` });
      }
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = send(url, {
        method: 'POST',
        lookup,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(post.body),
          'user-agent': 'board-task-service-webhooks',
          ...signatureHeaders(post),
        },
      });
      const timer = setTimeout(() => req.destroy(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => {
          clearTimeout(timer);
          const status = res.statusCode ?? 0;
          done({ ok: status >= 200 && status < 300, status_code: status, ...(status >= 200 && status < 300 ? {} : { error: `HTTP ${status}` }) });
        });
        res.on('error', (err) => {
          clearTimeout(timer);
          done({ ok: false, status_code: res.statusCode ?? 0, error: err.message });
        });
      });
      req.on('error', (err) => {
        clearTimeout(timer);
        done({ ok: false, error: err.message });
      });
      req.end(post.body);
    });
}
