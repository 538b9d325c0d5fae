import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { AppError } from '@app/shared/errors';

/**
 * Where webhooks may POST (issue 10, SSRF rules): http(s) only, always; with `NODE_ENV=production`
 * no private, loopback, link-local, unspecified, CGNAT or multicast address unless the host (name
 * or IP) is listed in `WEBHOOK_ALLOWED_HOSTS`. The embedded default (not production) allows
 * loopback so a developer can receive on localhost.
 */
export interface TargetPolicy {
  production: boolean;
  /** Lower-case host names and IP addresses exempt from the address rules. */
  allowedHosts: ReadonlySet<string>;
}

/** The policy of a config: `NODE_ENV` and the comma-separated `WEBHOOK_ALLOWED_HOSTS`. */
export function targetPolicy(config: { NODE_ENV?: string; WEBHOOK_ALLOWED_HOSTS?: string } | undefined): TargetPolicy {
  const hosts = (config?.WEBHOOK_ALLOWED_HOSTS ?? '').split(',').map((h) => h.trim().toLowerCase()).filter((h) => h !== '');
  return { production: config?.NODE_ENV === 'production', allowedHosts: new Set(hosts) };
}

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8]] as const) blocked.addSubnet(net, prefix, 'ipv6');

/** True when `address` (an IP literal) is private, loopback, link-local, unspecified, CGNAT or multicast. */
export function isInternalAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return blocked.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return blocked.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** Host of a URL without IPv6 brackets, lower case. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

/**
 * Parses and checks a webhook URL's form: absolute, `http:` or `https:`, no credentials.
 * Throws 400 `WEBHOOK_URL_REFUSED` with `details.reason`.
 */
export function parseTargetUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw refused(text, 'not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refused(text, `scheme ${url.protocol.replace(':', '')} is not http or https`);
  if (url.username || url.password) throw refused(text, 'credentials in the URL are not allowed');
  return url;
}

function refused(url: string, reason: string): AppError {
  return new AppError('WEBHOOK_URL_REFUSED', { message: `The webhook URL is not allowed: ${reason}`, details: { url, reason } });
}

/** Why `address` may not be reached under `policy`, or undefined when it may. */
export function addressRefusal(host: string, address: string, policy: TargetPolicy): string | undefined {
  if (!policy.production || policy.allowedHosts.has(host) || policy.allowedHosts.has(address.toLowerCase())) return undefined;
  return isInternalAddress(address) ? `${host} resolves to ${address}, a private, loopback or link-local address (add it to WEBHOOK_ALLOWED_HOSTS to allow it)` : undefined;
}

/**
 * Checks a webhook URL when it is created or changed: its form, and in production every address
 * its host resolves to. Throws 400 `WEBHOOK_URL_REFUSED`; returns the parsed URL.
 */
export async function checkTarget(text: string, policy: TargetPolicy): Promise<URL> {
  const url = parseTargetUrl(text);
  if (!policy.production) return url;
  const host = hostOf(url);
  if (policy.allowedHosts.has(host)) return url;
  let addresses: LookupAddress[];
  try {
    addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await new Promise((resolve, reject) => dnsLookup(host, { all: true }, (err, a) => (err ? reject(err) : resolve(a))));
  } catch {
    throw refused(text, `${host} does not resolve`);
  }
  for (const a of addresses) {
    const why = addressRefusal(host, a.address, policy);
    if (why) throw refused(text, why);
  }
  return url;
}

/**
 * A `lookup` for `http.request` that applies the address rules to the address actually connected
 * to (so DNS rebinding between the check and the request cannot reach an internal address).
 */
export function guardedLookup(policy: TargetPolicy): typeof dnsLookup {
  const guarded = (hostname: string, options: unknown, callback: (...args: unknown[]) => void): void => {
    dnsLookup(hostname, options as { all: true }, (err, result: LookupAddress[] | string, family?: number) => {
      if (err) return callback(err);
      const list = Array.isArray(result) ? result : [{ address: result, family: family ?? 4 }];
      for (const a of list) {
        const why = addressRefusal(hostname.toLowerCase(), a.address, policy);
        if (why) return callback(Object.assign(new Error(`refused: ${why}`), { code: 'EWEBHOOKREFUSED' }));
      }
      callback(null, result, family);
    });
  };
  return guarded as unknown as typeof dnsLookup;
}
