import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { boardsService } from '@app/boards';
import { eventWork, queryService, type EventWorkOptions } from '@app/query';
import { sprintsService } from '@app/sprints';
import { tasksService } from '@app/tasks';
import { MemoryBus, type Served } from '@app/shared/bus';
import { CommonConfig, loadConfig } from '@app/shared/config';
import { fixedClock } from '@app/shared/domain';
import { silentLogger } from '@app/shared/log';
import { instrumentBus, instrumentStore, type Tracer } from '@app/shared/observability';
import { serveServices } from '@app/shared/runtime';
import type { DocumentStore } from '@app/shared/store';
import { testStore, type TransactionRulesStore } from '@app/shared/testing';
import { expect } from 'vitest';
import { buildApp, type GatewayDeps } from '../../src/index.js';
import { bearer, login, register, testConfig } from './helpers.js';

/** The instant the services' clock is frozen at (JWT expiry stays wall-clock time). */
export const NOW = '2026-03-02T09:00:00.000Z';

/** A registered, logged-in user: its id and the bearer header to send. */
export interface User {
  id: string;
  name: string;
  headers: Record<string, string>;
}

/** A JSON answer as a client sees it: status, headers and the parsed body (`undefined` when empty). */
export interface Answer {
  status: number;
  headers: LightMyRequestResponse['headers'];
  // Tests read arbitrary response fields; the shapes are what the assertions check.
  body: any;
}

/** The whole system in one process, driven only through HTTP (`app.inject()`). */
export interface System extends AsyncDisposable {
  app: FastifyInstance;
  /** The one store every service and the gateway share (close it to simulate a store outage). */
  store: DocumentStore;
  /**
   * The test store beneath `store` (`testStore()`): MongoDB's transaction rules, and the record of
   * what each committed transaction wrote (`rules.transactionsDuring(fn)`, `commonWrites`).
   */
  rules: TransactionRulesStore;
  clock: ReturnType<typeof fixedClock>;
  /** Stops serving one service on the bus (its requests then find no responder). */
  stop(service: 'tasks' | 'boards' | 'sprints' | 'query'): Promise<void>;
  /** Registers and logs in `name`; returns its id and bearer header. */
  user(name: string): Promise<User>;
  /** Sends one request; `body` is sent as JSON when given; `headers` are added to the user's. */
  call(method: string, url: string, as?: User, body?: unknown, headers?: Record<string, string>): Promise<Answer>;
}

/**
 * Builds the real gateway (`buildApp` with the real route table) on a `MemoryBus` and the suite's
 * test store (`testStore`: the leg's store under MongoDB's transaction rules), with the tasks,
 * boards, sprints and query services served on the same bus through `serveServices`, all on one fixed clock. Dispose with `await using`. `streamOptions` and
 * `env` (config variables of the gateway and the services) tune events; `webhooks` runs
 * the query service's background work (dispatcher, sweep) with those options; `clockAt` starts
 * the clock elsewhere than {@link NOW}; `tracer` (of a tracer provider the test started) traces
 * HTTP requests, the bus, the store and the background work as main.ts does; `store` replaces
 * the suite's test store.
 */
export async function system(
  opts: Pick<GatewayDeps, 'streamOptions' | 'metrics' | 'oidcFetch'> & {
    env?: Record<string, string>;
    webhooks?: EventWorkOptions;
    clockAt?: string;
    tracer?: Tracer;
    /** The store to run on instead of the suite's `testStore()` (a file-backed one to restart on). */
    store?: () => Promise<TransactionRulesStore>;
  } = {},
): Promise<System> {
  // with metrics or a tracer, the bus and store are measured and traced as main.ts does
  const tools = { metrics: opts.metrics, tracer: opts.tracer };
  const bus = instrumentBus(new MemoryBus(), tools);
  const rules = await (opts.store ?? testStore)();
  const store = instrumentStore(rules, tools);
  const clock = fixedClock(opts.clockAt ?? NOW);
  const log = silentLogger();
  const query = opts.webhooks ? { ...queryService, background: eventWork(opts.webhooks) } : queryService;
  const services = [tasksService, boardsService, sprintsService, query];
  const config = loadConfig(CommonConfig, opts.env ?? {});
  const served: Served[] = await serveServices(services, {
    bus, store, log, clock, config, background: opts.webhooks !== undefined, metrics: opts.metrics, tracer: opts.tracer,
  });
  const app = await buildApp({
    bus, store, clock, log, config: testConfig({ RATE_LIMIT_AUTH_MAX: '1000', ...opts.env }),
    ...(opts.streamOptions ? { streamOptions: opts.streamOptions } : {}), ...(opts.oidcFetch ? { oidcFetch: opts.oidcFetch } : {}), metrics: opts.metrics, tracer: opts.tracer,
  });

  const call = async (method: string, url: string, as?: User, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> => {
    const res = await app.inject({
      method: method as 'GET',
      url,
      headers: { ...as?.headers, ...headers },
      ...(body === undefined ? {} : { payload: body as object }),
    });
    return { status: res.statusCode, headers: res.headers, body: res.body === '' ? undefined : res.json() };
  };

  return {
    app, store, rules, clock, call,
    async stop(service) {
      await served[services.findIndex((d) => d.name === service)]!.close();
    },
    async user(name) {
      const reg = await register(app, name);
      if (reg.statusCode !== 201) throw new Error(`register ${name}: ${reg.statusCode} ${reg.body}`);
      const tokens = await login(app, name);
      return { id: tokens.userId, name, headers: bearer(tokens.accessToken) };
    },
    async [Symbol.asyncDispose]() {
      await app.close();
      for (const s of served) await s.close();
      await bus.close();
      await store.close();
    },
  };
}

/**
 * Asserts an error answer: `status`, `code`, a message and a trace id, and no stack or internal
 * detail anywhere in the body (docs/architecture.md §4). Returns the body for further checks.
 */
export function expectError(res: Answer, status: number, code: string): any {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toMatchObject({ code, message: expect.any(String), traceId: expect.any(String) });
  expect(res.body.message.length).toBeGreaterThan(0);
  expect(JSON.stringify(res.body)).not.toMatch(/stack|\n\s+at /);
  return res.body;
}

/** Asserts the legacy-path headers: `Deprecation: true` and a `Link` to `successor`. */
export function expectDeprecated(res: Answer, successor: string): void {
  expect(res.headers.deprecation).toBe('true');
  expect(res.headers.link).toBe(`<${successor}>; rel="successor-version"`);
}
