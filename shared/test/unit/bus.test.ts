import {
  ClosedConnectionError,
  ConnectionError,
  InvalidArgumentError,
  NoRespondersError,
  RequestError,
  TimeoutError,
} from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { EncodedJson, encodeOk, isNoResponders, MemoryBus, natsErrorToAppError } from '@app/shared/bus';
import { AppError } from '@app/shared/errors';
import { busContract } from '@app/shared/testing';

busContract('MemoryBus', async () => {
  const bus = new MemoryBus();
  return { client: bus, server: bus, server2: bus, dispose: () => bus.close() };
});

describe('natsErrorToAppError', () => {
  const request = { subject: 'tasks.get', timeoutMs: 500 };

  it.each([
    ['no responders', new RequestError("no responders: 'tasks.get'", { cause: new NoRespondersError('tasks.get') }), 'SERVICE_UNAVAILABLE', 503],
    ['a request cancelled by close', new RequestError('connection closed'), 'SERVICE_UNAVAILABLE', 503],
    ['a closed connection', new ClosedConnectionError(), 'SERVICE_UNAVAILABLE', 503],
    ['a refused connection', new ConnectionError('connection refused'), 'SERVICE_UNAVAILABLE', 503],
    ['a timeout', new TimeoutError(), 'UPSTREAM_TIMEOUT', 504],
    ['a payload over max_payload', InvalidArgumentError.format('payload', 'max_payload size exceeded'), 'PAYLOAD_TOO_LARGE', 413],
    ['any other error', new Error('boom'), 'INTERNAL', 500],
  ])('maps %s to %s', (_, nats, code, status) => {
    const err = natsErrorToAppError(nats, request);
    expect(err).toMatchObject({ code, status });
    // the NATS error is kept for the log: directly, or under the NoResponders that marks a 503 as such
    expect(isNoResponders(err) ? (err.cause as Error).cause : err.cause).toBe(nats);
    expect(isNoResponders(err)).toBe(_ === 'no responders');
  });

  it('names the subject (and the timeout on a 504) in details', () => {
    expect(natsErrorToAppError(new TimeoutError(), request).details).toEqual(request);
    expect(natsErrorToAppError(new ClosedConnectionError(), request).details).toEqual({ subject: 'tasks.get' });
  });

  it('passes an AppError through unchanged', () => {
    const own = new AppError('TASK_NOT_FOUND');
    expect(natsErrorToAppError(own, request)).toBe(own);
  });
});

describe('encodeOk', () => {
  it('sends an EncodedJson as its text and any other value through JSON.stringify', () => {
    expect(encodeOk(new EncodedJson('{"a":[1,2]}'))).toBe('{"ok":true,"data":{"a":[1,2]}}');
    expect(encodeOk({ json: '{"a":1}' })).toBe('{"ok":true,"data":{"json":"{\\"a\\":1}"}}');
    expect(encodeOk(undefined)).toBe('{"ok":true,"data":null}');
  });
});
