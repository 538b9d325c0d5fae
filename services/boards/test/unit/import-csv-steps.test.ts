import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { AppError } from '@app/shared/errors';
import { readCsv, readCsvInSteps } from '../../src/imports/index.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');

describe('reading a CSV in steps', () => {
  it('gives what the one-step read gives, also for quoted fields across the steps, and the same error', async () => {
    const rows = Array.from({ length: 4_000 }, (_, i) => `"Card ""${i}""","line one\nline two, ${'x'.repeat(i % 50)}"`);
    const long = `title,description\n${rows.join('\n')}\n`;
    expect(long.length).toBeGreaterThan(3 * 64 * 1024);
    for (const text of [long, fixture('jira-issues.csv'), fixture('plain.csv')]) expect(await readCsvInSteps(text)).toEqual(readCsv(text));
    expect((await readCsvInSteps(long)).rows[2]).toEqual({ line: 7, cells: ['Card "2"', 'line one\nline two, xx'] });
    const bad = `a,b\n${'1,2\n'.repeat(40_000)}1,"open\n`;
    let err: AppError | undefined;
    await readCsvInSteps(bad).catch((e: AppError) => (err = e));
    expect(err?.validationErrors?.[0]).toMatchObject({ field: '/data', message: expect.stringMatching(/line/) });
  });
});
