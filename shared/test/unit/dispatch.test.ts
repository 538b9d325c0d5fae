import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { bind, decodeReplyText, dispatch, dispatchReply, jsonText, MemoryBus, OK_PREFIX, type Reply } from '@app/shared/bus';
import { op } from '@app/shared/contracts';
import { AppError } from '@app/shared/errors';
import { silentLogger } from '@app/shared/log';
import { captureLog } from '@app/shared/testing';

const Rename = op({
  subject: 'test.rename',
  request: Type.Object({ id: Type.String({ minLength: 1 }), title: Type.String({ maxLength: 10 }) }),
  response: Type.Object({ id: Type.String(), title: Type.String() }),
});
const rename = bind(Rename, async (input) => input);
const log = silentLogger();

/** Runs one request through dispatch and returns the parsed reply envelope. */
async function reply(payload: string, binding = rename, logger = log): Promise<Reply> {
  return JSON.parse(await dispatch(binding, payload, { requestId: 'req-1' }, Rename.subject, logger)) as Reply;
}

describe('dispatch', () => {
  it('answers a valid request with {ok:true, data} starting with OK_PREFIX', async () => {
    const text = await dispatch(rename, '{"id":"t1","title":"Plan"}', {}, Rename.subject, log);
    expect(text.startsWith(OK_PREFIX)).toBe(true);
    expect(JSON.parse(text)).toEqual({ ok: true, data: { id: 't1', title: 'Plan' } });
  });

  it('answers a payload that is not JSON with 400 BAD_REQUEST', async () => {
    expect(await reply('{"id":')).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
  });

  it('answers an invalid payload with 400 VALIDATION_FAILED naming every field at fault', async () => {
    const r = await reply('{"title":"a title that is too long"}');
    expect(r).toMatchObject({ ok: false, error: { code: 'VALIDATION_FAILED' } });
    const fields = r.ok ? [] : r.error.validationErrors?.map((v) => v.field);
    expect(fields?.sort()).toEqual(['/id', '/title']);
  });

  it('treats an empty payload as a missing body (validated, not a JSON error)', async () => {
    expect(await reply('')).toMatchObject({ ok: false, error: { code: 'VALIDATION_FAILED' } });
  });

  it('encodes a handler AppError as is', async () => {
    const missing = bind(Rename, async () => {
      throw new AppError('TASK_NOT_FOUND', { details: { id: 't9' } });
    });
    expect(await reply('{"id":"t9","title":"x"}', missing)).toEqual({
      ok: false,
      error: { code: 'TASK_NOT_FOUND', message: 'Task not found', details: { id: 't9' } },
    });
  });

  it('encodes an unexpected error as INTERNAL and logs it once with the request id', async () => {
    const { log: sink, lines } = captureLog();
    const crash = bind(Rename, async () => {
      throw new TypeError('cannot read secretField of undefined');
    });
    const r = await reply('{"id":"t1","title":"x"}', crash, sink);
    expect(r).toEqual({ ok: false, error: { code: 'INTERNAL', message: 'Internal error' } });
    const errors = lines().filter((l) => l.level === 50);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ reqId: 'req-1', subject: Rename.subject, err: { message: 'cannot read secretField of undefined' } });
  });
});

describe('dispatch of a pre-serialized reply (EncodedJson)', () => {
  // Spacing no JSON.stringify would produce shows the text went through untouched.
  const text = '{ "id": "t1",  "title": "Plan" }';
  const Versioned = op({ ...Rename, subject: 'test.versioned', versionOf: () => 7 });

  it('puts the text into the envelope as it is, instead of serializing a value', async () => {
    const raw = bind(Rename, async () => jsonText(text));
    const out = await dispatch(raw, '{"id":"t1","title":"x"}', {}, Rename.subject, log);
    expect(out).toBe(`${OK_PREFIX}${text}}`);
    expect(decodeReplyText(out)).toBe(text);
  });

  it("does not apply the op's versionOf to it (no version in the reply meta)", async () => {
    const raw = bind(Versioned, async () => jsonText(text));
    const { meta } = await dispatchReply(raw, '{"id":"t1","title":"x"}', {}, Versioned.subject, log);
    expect(meta.version).toBeUndefined();
    const value = bind(Versioned, async (input) => input);
    expect((await dispatchReply(value, '{"id":"t1","title":"x"}', {}, Versioned.subject, log)).meta.version).toBe(7);
  });

  it('reaches a bus caller as the value the text encodes', async () => {
    const bus = new MemoryBus();
    await bus.serve([bind(Rename, async () => jsonText(text))], { queue: 'test', log });
    expect(await bus.request(Rename, { id: 't1', title: 'x' })).toEqual({ id: 't1', title: 'Plan' });
    expect(await bus.requestText(Rename, { id: 't1', title: 'x' })).toBe(text);
    await bus.close();
  });
});

describe('dispatch of a value the handler already serialized (ctx.encoded)', () => {
  const Versioned = op({ ...Rename, subject: 'test.versioned', versionOf: () => 7 });
  const text = '{ "id": "t1",  "title": "Plan" }';

  it('sends the text when the handler returns that very value, with the version of the value', async () => {
    const h = bind(Versioned, async (_input, ctx) => {
      const value = { id: 't1', title: 'Plan' };
      ctx.encoded = { value, json: text };
      return value;
    });
    const { text: out, meta } = await dispatchReply(h, '{"id":"t1","title":"x"}', {}, Versioned.subject, log);
    expect(out).toBe(`${OK_PREFIX}${text}}`);
    expect(meta.version).toBe(7);
  });

  it('serializes the value as usual when the handler returns another object', async () => {
    const h = bind(Rename, async (input, ctx) => {
      ctx.encoded = { value: { id: 'other', title: 'Other' }, json: text };
      return input;
    });
    expect(await dispatch(h, '{"id":"t1","title":"x"}', {}, Rename.subject, log)).toBe(`${OK_PREFIX}{"id":"t1","title":"x"}}`);
  });
});

describe('decodeReplyText', () => {
  it('returns the data text of a success reply', () => {
    expect(decodeReplyText('{"ok":true,"data":{"a":[1,2]}}')).toBe('{"a":[1,2]}');
    expect(decodeReplyText('{ "ok": true, "data": 5 }')).toBe('5');
  });

  it('throws the carried AppError of an error reply', () => {
    const text = JSON.stringify({ ok: false, error: { code: 'BOARD_NOT_FOUND', message: 'gone', details: { id: 'b1' } } });
    expect(() => decodeReplyText(text)).toThrow(expect.objectContaining({ code: 'BOARD_NOT_FOUND', status: 404, message: 'gone' }));
  });

  it('throws INTERNAL for an unreadable reply', () => {
    expect(() => decodeReplyText('<html>')).toThrow(expect.objectContaining({ code: 'INTERNAL' }));
  });
});
