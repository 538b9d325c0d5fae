import { readFileSync } from 'node:fs';
import { runInNewContext } from 'node:vm';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '@app/shared/config';
import { ensureAdmin, GatewayConfig } from '../../src/index.js';
import { system } from './system.js';

/**
 * The README's "Compose walkthrough" against the files it relies on: the compose file (services,
 * ports, profiles, interpolated variables, the `mongo` healthcheck), `.env.example` and the config
 * loader. Nothing here runs Docker (none exists on the test machines; `.ci/run` validates the
 * compose file with `docker-compose config -q`): the walkthrough's HTTP steps run on the
 * in-process system with `.env.example`'s settings, and the healthcheck's mongosh script runs
 * against stand-ins of the mongosh calls it makes.
 */

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const read = (name: string) => readFileSync(`${ROOT}${name}`, 'utf8');

interface ComposeService {
  image?: string;
  ports?: string[];
  expose?: Array<string | number>;
  environment?: Record<string, unknown> | string[];
  profiles?: string[];
  command?: string[] | string;
  healthcheck?: { test?: string[] | string };
}
const compose = parse(read('docker-compose.yml')) as { services: Record<string, ComposeService> };
const composeText = read('docker-compose.yml');
const services = compose.services;

/** `.env.example` as key → value (comments and blank lines skipped). */
const envExample: Record<string, string> = Object.fromEntries(
  read('.env.example')
    .split('\n')
    .filter((l) => /^[A-Z][A-Z0-9_]*=/.test(l))
    .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
);

/** The README's "## Compose walkthrough" section, up to the next `## ` heading. */
function composeSection(): string {
  const readme = read('README.md');
  const start = readme.indexOf('\n## Compose walkthrough\n');
  if (start < 0) throw new Error('README.md has no "## Compose walkthrough" section');
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}
const section = composeSection();

/** Names of the variables a compose service sets in its container (`environment`). */
function environmentNames(s: ComposeService): string[] {
  const env = s.environment ?? {};
  return Array.isArray(env) ? env.map((e) => e.split('=')[0]!) : Object.keys(env);
}

/** Host ports published by the compose file (`"8080:8080"` → 8080). */
function publishedPorts(): number[] {
  return Object.values(services).flatMap((s) => (s.ports ?? []).map((p) => Number(String(p).split(':').slice(-2)[0])));
}

/** Container ports a service listens on for other services: `expose` and the container side of `ports`. */
function containerPorts(s: ComposeService): number[] {
  return [...(s.expose ?? []).map(Number), ...(s.ports ?? []).map((p) => Number(String(p).split(':').at(-1)))];
}

/** Flags of `docker compose` and its subcommands that take a value. */
const FLAGS_WITH_VALUE = new Set(['--profile', '-f', '--file', '-p', '--project-name', '--env-file', '--scale', '-t', '--timeout', '--tail']);

/** Every `docker compose …` invocation in `text` as `{assigned, subcommand, services, profiles}`. */
function composeCommands(text: string) {
  const out: Array<{ assigned: string[]; subcommand: string; services: string[]; profiles: string[] }> = [];
  for (const m of text.matchAll(/((?:[A-Z][A-Z0-9_]*=\S*\s+)*)docker[ -]compose((?:[ \t]+[^\s;#|&`)]+)*)/g)) {
    const words = m[2]!.trim().split(/\s+/).filter((w) => w !== '');
    const profiles: string[] = [];
    let subcommand = '';
    const named: string[] = [];
    for (let i = 0; i < words.length; i++) {
      const w = words[i]!;
      if (w.startsWith('-')) {
        if (FLAGS_WITH_VALUE.has(w)) {
          if (w === '--profile') profiles.push(words[i + 1]!);
          i++;
        }
      } else if (subcommand === '') subcommand = w;
      else named.push(w);
    }
    // exec/run: the first word is the service, the rest its command
    const servicesNamed = subcommand === 'exec' || subcommand === 'run' ? named.slice(0, 1) : named;
    out.push({ assigned: (m[1] ?? '').trim().split(/\s+/).filter((a) => a !== '').map((a) => a.split('=')[0]!), subcommand, services: servicesNamed, profiles });
  }
  return out;
}

describe('README compose walkthrough against docker-compose.yml, .env.example and the config loader', () => {
  it('names only services and profiles the compose file has', () => {
    const commands = composeCommands(section);
    expect(commands.map((c) => c.subcommand)).toContain('up');
    const profiles = new Set(Object.values(services).flatMap((s) => s.profiles ?? []));
    for (const c of commands) {
      for (const name of c.services) expect(Object.keys(services), `docker compose ${c.subcommand} ${name}`).toContain(name);
      for (const p of c.profiles) expect([...profiles], `--profile ${p}`).toContain(p);
    }
  });

  it('reaches the host only on ports the compose file publishes, and services only on ports they listen on', () => {
    const urls = [...section.matchAll(/https?:\/\/([a-z0-9.-]+):(\d+)/gi)].map((m) => ({ host: m[1]!.toLowerCase(), port: Number(m[2]) }));
    expect(urls.length).toBeGreaterThan(0);
    for (const { host, port } of urls) {
      if (host === 'localhost' || host === '127.0.0.1') {
        expect(publishedPorts(), `http://${host}:${port}`).toContain(port);
      } else {
        expect(Object.keys(services), `http://${host}:${port}`).toContain(host);
        expect(containerPorts(services[host]!), `http://${host}:${port}`).toContain(port);
      }
    }
  });

  it('names only variables of .env.example, the compose file or the config loader', () => {
    const known = new Set([
      ...Object.keys(envExample),
      ...Object.keys(GatewayConfig.properties),
      ...Object.values(services).flatMap(environmentNames),
    ]);
    const named = new Set(section.match(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g) ?? []);
    expect(named.size).toBeGreaterThan(0);
    for (const name of named) expect(known.has(name), `${name} is named in the README's compose section`).toBe(true);
    // and .env.example itself holds only variables some process reads
    const readByProcesses = new Set([...Object.keys(GatewayConfig.properties), ...Object.values(services).flatMap(environmentNames)]);
    for (const name of Object.keys(envExample)) expect(readByProcesses.has(name), `${name} in .env.example`).toBe(true);
  });

  it('reads from .env only keys .env.example sets, and passes docker compose only variables the compose file interpolates', () => {
    for (const m of section.matchAll(/s\/\^([A-Z][A-Z0-9_]*)=\/\/p' \.env/g)) {
      expect(envExample[m[1]!], `${m[1]} in .env.example`).toBeTruthy();
    }
    for (const c of composeCommands(section)) {
      for (const name of c.assigned) expect(composeText, `${name}=… docker compose`).toContain(`\${${name}`);
    }
  });

  it('targets webhooks only at compose services that .env.example allows through the SSRF rules', () => {
    const targets = [...section.matchAll(/"url":"(https?:\/\/[^"]+)"/g)].map((m) => new URL(m[1]!));
    expect(targets.length).toBeGreaterThan(0);
    const allowed = envExample.WEBHOOK_ALLOWED_HOSTS!.split(',').map((h) => h.trim().toLowerCase());
    for (const url of targets) {
      expect(Object.keys(services), url.href).toContain(url.hostname);
      if (envExample.NODE_ENV === 'production') expect(allowed, url.href).toContain(url.hostname);
    }
  });
});

describe('the compose walkthrough on .env.example\'s settings', () => {
  /** `.env.example` as the gateway and the services would read it (the in-process system brings its own bus and store). */
  const env = (() => {
    const { NATS_URL: _nats, MONGO_URL: _mongo, LOG_LEVEL: _level, ...rest } = envExample;
    return rest;
  })();
  const webhookUrl = /"url":"(https?:\/\/[^"]+)"/.exec(section)?.[1];

  it('registers with the invite code, logs in, creates the webhook to the receiver and a task', async () => {
    expect(env.NODE_ENV).toBe('production');
    await using sys = await system({ env });
    const user = { username: 'ada', password: 'correct horse battery' };
    // the section's register carries the invite code it reads from .env
    expect(section).toMatch(/"inviteCode\\?"/);
    expect((await sys.call('POST', '/auth/v2/register', undefined, user)).status).toBe(403);
    const reg = await sys.call('POST', '/auth/v2/register', undefined, { ...user, inviteCode: env.INVITE_CODE });
    expect(reg.status, JSON.stringify(reg.body)).toBe(201);
    const login = await sys.call('POST', '/auth/v2/login', undefined, user);
    expect(login.status).toBe(200);
    const ada = { id: login.body.userId, name: 'ada', headers: { authorization: `Bearer ${login.body.accessToken}` } };

    const hook = await sys.call('POST', '/api/v1/webhooks', ada, { url: webhookUrl, events: ['*'] });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    expect(hook.body.secret).toMatch(/^whsec_/);
    // the walkthrough's npm start webhook would be refused here: loopback, and no opt-out in .env.example
    expect(env.WEBHOOK_ALLOW_PRIVATE).toBeUndefined();
    const local = await sys.call('POST', '/api/v1/webhooks', ada, { url: 'http://localhost:3000/hooks', events: ['*'] });
    expect(local.body.code).toBe('WEBHOOK_URL_REFUSED');

    expect((await sys.call('POST', '/api/v1/tasks', ada, { title: 'Try the compose deployment', tags: ['ops'] })).status).toBe(201);
  });

  it("accepts the npm start walkthrough's webhook to localhost with the opt-out the README starts npm start with", async () => {
    const readme = read('README.md');
    expect(readme).toContain('With `WEBHOOK_ALLOW_PRIVATE=true npm start` running');
    const url = /-d '\{"url":"(http:\/\/localhost:[^"]+)"/.exec(readme)?.[1];
    expect(url).toBe('http://localhost:3000/hooks');
    await using dev = await system({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    const ada = await dev.user('ada');
    expect((await dev.call('POST', '/api/v1/webhooks', ada, { url, events: ['*'] })).status).toBe(201);
    await using plain = await system();
    const bob = await plain.user('bob');
    expect((await plain.call('POST', '/api/v1/webhooks', bob, { url, events: ['*'] })).body.code).toBe('WEBHOOK_URL_REFUSED');
  });

  it('lets the admin of .env.example log in (the way in when registration is closed)', async () => {
    await using sys = await system({ env: { ...env, REGISTRATION_ENABLED: 'false' } });
    const config = loadConfig(GatewayConfig, env);
    expect(await ensureAdmin(sys.store, config)).toBe(true);
    const login = await sys.call('POST', '/auth/v2/login', undefined, { username: env.ADMIN_USERNAME, password: env.ADMIN_PASSWORD });
    expect(login.status).toBe(200);
    const reg = await sys.call('POST', '/auth/v2/register', undefined, { username: 'ada', password: 'correct horse battery', inviteCode: env.INVITE_CODE });
    expect(reg.body.code).toBe('REGISTRATION_DISABLED');
  });
});

/** Outcome of one run of the `mongo` healthcheck: mongosh's exit code and the replica set it initiated. */
interface CheckRun {
  exit: number;
  initiated?: { _id: string; members: Array<{ _id: number; host: string }> };
}

/**
 * Runs the compose file's `mongo` healthcheck script as mongosh would (`--eval`: an uncaught
 * exception exits 1, `quit(n)` exits n, the end of the script exits 0) against stand-ins of the
 * calls it may make (`rs.status`, `rs.initiate`, `db.hello`), for a node in `state`.
 */
function runHealthcheck(script: string, state: 'fresh' | 'electing' | 'primary' | 'unreachable'): CheckRun {
  const run: CheckRun = { exit: 0 };
  class Quit {
    constructor(readonly code: number) {}
  }
  const serverError = (codeName: string, code: number) => Object.assign(new Error(codeName), { name: 'MongoServerError', codeName, code });
  const context = {
    rs: {
      status: () => {
        if (state === 'unreachable') throw Object.assign(new Error('connect ECONNREFUSED'), { name: 'MongoNetworkError' });
        if (state === 'fresh' && !run.initiated) throw serverError('NotYetInitialized', 94);
        return { ok: 1, members: [{ stateStr: state === 'primary' ? 'PRIMARY' : 'SECONDARY' }] };
      },
      initiate: (config: CheckRun['initiated']) => {
        if (state !== 'fresh' || run.initiated) throw serverError('AlreadyInitialized', 23);
        run.initiated = config;
        return { ok: 1 };
      },
    },
    db: {
      hello: () => {
        if (state === 'unreachable') throw Object.assign(new Error('connect ECONNREFUSED'), { name: 'MongoNetworkError' });
        // a freshly initiated node holds an election first: not yet writable
        return { isWritablePrimary: state === 'primary', secondary: state !== 'primary' };
      },
    },
    quit: (code = 0) => {
      throw new Quit(code);
    },
    print: () => undefined,
    printjson: () => undefined,
  };
  try {
    runInNewContext(script, context);
  } catch (e) {
    run.exit = e instanceof Quit ? e.code : 1;
  }
  return run;
}

describe('the compose file\'s mongo healthcheck', () => {
  const test = services.mongo?.healthcheck?.test;
  const script = (() => {
    if (!Array.isArray(test) || test[0] !== 'CMD' || test[1] !== 'mongosh') throw new Error('the mongo healthcheck is not a mongosh CMD');
    const i = test.indexOf('--eval');
    return test[i + 1]!;
  })();

  it('initiates the replica set the services connect to, on the first run, and is not yet healthy', () => {
    const run = runHealthcheck(script, 'fresh');
    expect(run.exit).not.toBe(0);
    const replSet = /--replSet[ =,"\]\s]*"?([A-Za-z0-9_-]+)/.exec(JSON.stringify(services.mongo!.command))?.[1];
    expect(run.initiated?._id).toBe(replSet);
    expect(envExample.MONGO_URL).toContain(`replicaSet=${replSet}`);
    // the member's host is the compose service name, which every service resolves
    const [host, port] = run.initiated!.members[0]!.host.split(':');
    expect(Object.keys(services)).toContain(host);
    expect(envExample.MONGO_URL).toContain(`//${host}:${port}`);
  });

  it('stays unhealthy while the node is not the writable primary, and when mongod does not answer', () => {
    expect(runHealthcheck(script, 'electing')).toEqual({ exit: 1 });
    expect(runHealthcheck(script, 'unreachable').exit).not.toBe(0);
  });

  it('is healthy once the node is the writable primary, without initiating again', () => {
    expect(runHealthcheck(script, 'primary')).toEqual({ exit: 0 });
  });
});
