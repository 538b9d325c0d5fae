import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { AppError } from '@app/shared/errors';

/**
 * Where webhooks may POST (SSRF rules, docs/events.md "SSRF rules"): http(s) only, always; and, by
 * default, no private, loopback, link-local, unspecified, CGNAT or multicast address unless the
 * host (name or IP) is listed in `WEBHOOK_ALLOWED_HOSTS`. Only `WEBHOOK_ALLOW_PRIVATE=true` (local
 * development: a receiver on localhost) turns the address rules off; `NODE_ENV` plays no part.
 */
export interface TargetPolicy {
  /** True when the address rules apply (every configuration but `WEBHOOK_ALLOW_PRIVATE=true`). */
  guarded: boolean;
  /** Lower-case host names and IP addresses exempt from the address rules. */
  allowedHosts: ReadonlySet<string>;
}

/** The policy of a config: `WEBHOOK_ALLOW_PRIVATE` and the comma-separated `WEBHOOK_ALLOWED_HOSTS`; no config: guarded, no exceptions. */
export function targetPolicy(config: { WEBHOOK_ALLOW_PRIVATE?: boolean; WEBHOOK_ALLOWED_HOSTS?: string } | undefined): TargetPolicy {
  const hosts = (config?.WEBHOOK_ALLOWED_HOSTS ?? '').split(',').map((h) => h.trim().toLowerCase()).filter((h) => h !== '');
  return { guarded: config?.WEBHOOK_ALLOW_PRIVATE !== true, allowedHosts: new Set(hosts) };
}

/** IPv4 ranges a webhook may not reach under the address rules (ipaddr.js range names). */
const REFUSED_V4 = new Set(['unspecified', 'broadcast', 'multicast', 'linkLocal', 'loopback', 'carrierGradeNat', 'private', 'reserved']);
/** IPv6 ranges a webhook may not reach under the address rules; the ranges that embed an IPv4 address are judged by it instead. */
const REFUSED_V6 = new Set(['unspecified', 'linkLocal', 'multicast', 'loopback', 'uniqueLocal', 'deprecatedSiteLocal', 'discard', 'benchmarking', 'reserved']);

const v4 = (b: readonly number[]) => new ipaddr.IPv4([b[0]!, b[1]!, b[2]!, b[3]!]);

/**
 * The IPv4 addresses an IPv6 address carries, by the form it has (RFC 4291 IPv4-mapped and
 * IPv4-compatible, RFC 6145, RFC 6052 / RFC 8215 NAT64, RFC 3056 6to4, RFC 4380 Teredo); empty for
 * a plain IPv6 address. Such an address reaches (through a translator or tunnel) the IPv4 inside,
 * so that is what the rules judge. A local-use NAT64 prefix (`64:ff9b:1::/48`) may embed the IPv4
 * address at any RFC 6052 prefix length from /48 on: each candidate is returned.
 */
export function embeddedIPv4(addr: ipaddr.IPv6): ipaddr.IPv4[] {
  const b = addr.toByteArray();
  const range = addr.range();
  const last = () => v4(b.slice(12));
  switch (range) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return [last()];
    case 'rfc6052': {
      if (b[4] === 0 && b[5] === 0 && b.slice(6, 12).every((x) => x === 0)) return [last()];
      // RFC 6052 §2.2: the u octet (byte 8) is skipped
      const at = (from: number) => v4([from, from + 1, from + 2, from + 3].map((i) => (i >= 8 ? b[i + 1]! : b[i]!)));
      return [at(6), at(7), v4(b.slice(9, 13)), last()];
    }
    case '6to4':
      return [v4(b.slice(2, 6))];
    case 'teredo':
      // server address, and the client address (stored inverted)
      return [v4(b.slice(4, 8)), v4(b.slice(12).map((x) => x ^ 0xff))];
    default:
      // IPv4-compatible (deprecated, RFC 4291 §2.5.5.1): 96 zero bits, then the IPv4 address
      return b.slice(0, 12).every((x) => x === 0) && range !== 'unspecified' && range !== 'loopback' ? [last()] : [];
  }
}

/**
 * True when `address` (an IP literal, IPv4 or IPv6) is private, loopback, link-local, unspecified,
 * CGNAT, multicast, broadcast or reserved, judged with ipaddr.js; an IPv6 address that embeds an
 * IPv4 address ({@link embeddedIPv4}) is refused when any IPv4 inside would be. Anything that does
 * not parse as an address counts as internal.
 */
export function isInternalAddress(address: string): boolean {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address.replace(/%.*$/, ''));
  } catch {
    return true;
  }
  if (parsed.kind() === 'ipv4') return REFUSED_V4.has(parsed.range());
  const v6 = parsed as ipaddr.IPv6;
  const inside = embeddedIPv4(v6);
  if (inside.length > 0) return inside.some((a) => REFUSED_V4.has(a.range()));
  return REFUSED_V6.has(v6.range());
}

/** Host of a URL without IPv6 brackets, lower case. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

/** Whitespace (any Unicode space) and control characters (C0, DEL, C1): never part of a webhook URL. */
const SPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f-\u009f]/u;

/**
 * Parses and checks a webhook URL's form with the WHATWG URL parser (`new URL`): absolute, `http:`
 * or `https:`, no credentials, and no whitespace or control character anywhere in the text sent
 * (the parser would silently strip or drop them, so the stored URL would not be what was sent).
 * The caller stores the parsed URL's normalized form (`href`: `http:/127.0.0.1:1` →
 * `http://127.0.0.1:1/`). Throws 400 `WEBHOOK_URL_REFUSED` with `details.reason` and
 * `details.field` = `/url`.
 */
export function parseTargetUrl(text: string): URL {
  const bad = SPACE_OR_CONTROL.exec(text);
  if (bad) throw refused(text, `contains whitespace or a control character (U+${bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} at ${bad.index})`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw refused(text, 'not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refused(text, `scheme ${url.protocol.replace(':', '')} is not http or https`);
  if (url.username || url.password) {
    // the error names the URL without its credentials: error bodies and logs never carry a secret
    url.username = url.password = '';
    throw refused(url.href, 'credentials in the URL are not allowed');
  }
  return url;
}

function refused(url: string, reason: string): AppError {
  return new AppError('WEBHOOK_URL_REFUSED', { message: `The webhook URL is not allowed: ${reason}`, details: { url, reason, field: '/url' } });
}

/**
 * The one reason given for a target the address rules refuse, whatever the cause (an internal
 * address, or a host that does not resolve): it names neither the address a host resolves to nor
 * which of the two it was, so webhook errors and the delivery log are no DNS oracle for internal names.
 */
function notAllowed(host: string): string {
  return `${host} is not an allowed target (private, loopback, link-local and unresolvable hosts are refused; WEBHOOK_ALLOWED_HOSTS lists exceptions)`;
}

/** Why `address` (one that `host` resolved to) may not be reached under `policy` ({@link notAllowed}), or undefined when it may. */
export function addressRefusal(host: string, address: string, policy: TargetPolicy): string | undefined {
  if (!policy.guarded || policy.allowedHosts.has(host) || policy.allowedHosts.has(address.toLowerCase())) return undefined;
  return isInternalAddress(address) ? notAllowed(host) : undefined;
}

/**
 * Checks a webhook URL when it is created or changed: its form ({@link parseTargetUrl}), and under
 * the address rules every address its host resolves to ({@link isInternalAddress}). Throws 400
 * `WEBHOOK_URL_REFUSED` (the same reason for an internal and an unresolvable host); returns the
 * parsed URL, whose `href` is what is stored.
 */
export async function checkTarget(text: string, policy: TargetPolicy): Promise<URL> {
  const url = parseTargetUrl(text);
  if (!policy.guarded) return url;
  const host = hostOf(url);
  if (policy.allowedHosts.has(host)) return url;
  let addresses: LookupAddress[];
  try {
    addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await new Promise((resolve, reject) => dnsLookup(host, { all: true }, (err, a) => (err ? reject(err) : resolve(a))));
  } catch {
    throw refused(text, notAllowed(host));
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
