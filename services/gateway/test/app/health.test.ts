import { describe, expect, it } from 'vitest';
import { AppError } from '@app/shared/errors';
import { testStore } from '@app/shared/testing';
import { testApp } from './helpers.js';

describe('health, readiness, version (public)', () => {
  it('GET /health answers ok without a token', async () => {
    await using t = await testApp();
    const res = await t.app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('GET /health/ready is ready when bus and store answer', async () => {
    await using t = await testApp();
    const res = await t.app.inject({ method: 'GET', url: '/health/ready' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ready', checks: { bus: 'ok', store: 'ok' } });
  });

  it('GET /health/ready is 503 naming the bus when the bus is closed', async () => {
    await using t = await testApp();
    await t.bus.close();
    const res = await t.app.inject({ method: 'GET', url: '/health/ready' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      details: { checks: { bus: 'SERVICE_UNAVAILABLE', store: 'ok' } },
      traceId: expect.any(String),
    });
  });

  it('GET /health/ready is 503 naming the store when the store does not answer', async () => {
    const store = await testStore();
    const broken = Object.assign(Object.create(store) as typeof store, {
      ping: async () => {
        throw new AppError('STORE_UNAVAILABLE');
      },
    });
    await using t = await testApp({ store: broken });
    const res = await t.app.inject({ method: 'GET', url: '/health/ready' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ code: 'STORE_UNAVAILABLE', details: { checks: { bus: 'ok', store: 'STORE_UNAVAILABLE' } } });
  });

  it('GET /version names the product and the configured version', async () => {
    await using t = await testApp({ env: { APP_VERSION: '9.8.7' } });
    const res = await t.app.inject({ method: 'GET', url: '/version' });
    expect(res.json()).toEqual({ name: 'board-task-service', version: '9.8.7' });
  });
});
