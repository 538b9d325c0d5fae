// A webhook receiver for trying webhooks out (the compose service `hooks`, README "Compose
// walkthrough"): logs one line per delivery and answers 204. With WEBHOOK_SECRET (the `whsec_…`
// secret of the webhook's create answer) it checks each delivery's Standard Webhooks signature
// (docs/events.md "Delivery") and answers 400 to one that does not verify. Node's crypto only.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

const port = Number(process.env.PORT || 3000);
const secret = process.env.WEBHOOK_SECRET || '';

/** True when `body` (the raw request text) carries a valid `v1` signature by `secret`, made within 5 minutes. */
function verify(headers, body) {
  const id = headers['webhook-id'];
  const ts = headers['webhook-timestamp'];
  if (!id || !ts || Math.abs(Date.now() / 1000 - Number(ts)) > 300) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = Buffer.from(createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest('base64'));
  return String(headers['webhook-signature'] ?? '')
    .split(' ')
    .some((sig) => {
      const [version, value] = sig.split(',');
      const got = Buffer.from(value ?? '');
      return version === 'v1' && got.length === expected.length && timingSafeEqual(got, expected);
    });
}

createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    let event = {};
    try {
      event = JSON.parse(body);
    } catch {
      // logged as it is below
    }
    const check = secret === '' ? 'unchecked (no WEBHOOK_SECRET)' : verify(req.headers, body) ? 'signature ok' : 'BAD SIGNATURE';
    console.log(`${req.method} ${req.url} ${check}: seq=${event.seq} ${event.type} task=${event.task_id ?? '-'} board=${event.board_id ?? '-'}`);
    res.writeHead(check === 'BAD SIGNATURE' ? 400 : 204).end();
  });
}).listen(port, () => console.log(`webhook receiver listening on port ${port}`));

// PID 1 in its container: stop at once on `docker compose stop` / `down`.
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => process.exit(0));
