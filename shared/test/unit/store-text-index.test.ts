import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { compileQuery, type Expr, type Query } from '@app/shared/query';
import { compileFilter, EmbeddedStore, type Doc, type Filter } from '@app/shared/store';
import { eventually } from '@app/shared/testing';
import { foldText, FTS_AUTOMERGE, MAX_QUERY_TRIGRAMS, requiredLiterals, TEXT_INDEX_VERSION, trigramQuery } from '../../src/store/embedded/text-index.js';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'text-index-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const filterOf = (where: Expr): Filter => compileQuery({ where, orderBy: [] } as Query, { now: new Date(0) }).filter;
const like = (field: 'title' | 'description', pattern: string, caseInsensitive: boolean, not = false): Filter =>
  filterOf({ type: 'like', field, pattern, caseInsensitive, not });
const tilde = (field: 'title' | 'description', text: string, not = false): Filter => filterOf({ type: 'match', field, text, not });

/** Ids the store returns for `filter`, sorted. */
/** Waits until `store` has written the FTS rows of every journaled document (its flush ran). */
async function flushed(store: EmbeddedStore): Promise<void> {
  await eventually('the FTS rows written', () => store.textRowsPending() === 0);
}

async function ids(store: EmbeddedStore, filter: Filter): Promise<string[]> {
  return (await store.collection('tasks').find(filter)).map((d) => d._id).sort();
}

/** Ids a plain scan (the store's matcher over every document) returns, sorted. */
function scan(docs: Doc[], filter: Filter): string[] {
  const matches = compileFilter(filter);
  return docs.filter((d) => matches(d)).map((d) => d._id).sort();
}

describe('text index: the pieces', () => {
  it('folds text as MongoDB (PCRE2, UTF mode) and a JavaScript /ui regular expression compare it: ſ = s, Kelvin = k, Angstrom = å', () => {
    const chars = ['a', 'A', 'z', 'é', 'É', 'ß', 'ẞ', 'σ', 'ς', 'Σ', 'ſ', 's', 'S', '\u212a', 'k', 'K', '\u212b', 'å', 'Å', 'ı', 'i', 'I', 'İ', 'ǅ', 'ǆ', 'Ǆ', 'ჰ', 'Ჰ', 'Ꭰ', 'ꭰ', 'µ', 'Μ', 'θ', 'ϑ', 'ϴ', '\u0345', 'ι', '\u{10400}', '\u{10428}'];
    for (const x of chars) {
      for (const y of chars) {
        const regexSays = new RegExp(x.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'ui').test(y);
        expect([x, y, foldText(y).includes(foldText(x))]).toEqual([x, y, regexSays]);
      }
    }
  });

  it('asks FTS for the AND of each literal\'s distinct trigrams, quoted, by code point, at most MAX_QUERY_TRIGRAMS each', () => {
    expect(trigramQuery(['WEBHOOK'])).toBe('"WEB" AND "EBH" AND "BHO" AND "HOO" AND "OOK"');
    expect(trigramQuery(['AAAA', 'A"B'])).toBe('"AAA" AND "A""B"');
    expect(trigramQuery(['😀AB'])).toBe('"😀AB"');
    const long = trigramQuery([Array.from({ length: 200 }, (_, i) => String.fromCharCode(65 + (i % 26)) + String.fromCharCode(65 + ((i * 7) % 26))).join('')]);
    expect(long.split(' AND ')).toHaveLength(MAX_QUERY_TRIGRAMS);
  });

  it('finds the literal pieces of the compiled ~ and LIKE patterns, and refuses other shapes', () => {
    const regexOf = (f: Filter) => (Object.values(f)[0] as { $regex: string }).$regex;
    expect(requiredLiterals(regexOf(tilde('title', 'Web.hook (v2)')))).toEqual(['web.hook (v2)']);
    expect(requiredLiterals(regexOf(like('title', 'Fix%pay_ent%hook', false)))).toEqual(['fix', 'pay', 'ent', 'hook']);
    expect(requiredLiterals(regexOf(like('title', '%ab%', false)))).toBeUndefined(); // no piece of 3
    expect(requiredLiterals(regexOf(like('title', '100\\%%', false)))).toEqual(['100%']);
    expect(requiredLiterals('abc|def')).toBeUndefined();
    expect(requiredLiterals('abcd?')).toBeUndefined();
    expect(requiredLiterals('ab[cd]ef')).toBeUndefined();
    expect(requiredLiterals('\\babc')).toBeUndefined();
    expect(requiredLiterals('(abc)')).toBeUndefined();
    expect(requiredLiterals('x\u0000yz')).toBeUndefined(); // cut at NUL: no piece of 3 left
    expect(requiredLiterals('ab\ud83dcde')).toEqual(['cde']); // cut at a lone surrogate
    expect(requiredLiterals('a😀b')).toEqual(['a😀b']);
  });
});

describe('text index: results equal the scan', () => {
  // letters with their case variants (weighted up, so searches of three or more letters are common),
  // wildcards, regex and quote characters, NUL, an emoji, lone surrogates and U+FFFD
  const alphabet = fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom('a', 'b', 'A', 'B', 'é', 'É', 'ß', 'σ', 'ς', 'Σ', 'ſ', 's', 'S', '\u212a', 'k', 'K', 'ı', 'i', 'I', 'İ') },
    { weight: 1, arbitrary: fc.constantFrom('%', '_', '\\', '.', '*', '(', ')', '[', ']', '?', '|', '^', '$', "'", '"', ' ', '\n', '\u0000', '😀', '\ud83d', '\ude00', '\ufffd') },
  );
  const text = fc.array(alphabet, { maxLength: 14 }).map((cs) => cs.join(''));
  /** A pattern: a slice of one of the texts (so matches are common) with case changes, or random. */
  const patternFor = (texts: string[]) =>
    fc.oneof(
      fc.tuple(fc.nat(), fc.nat(14), fc.nat(14), fc.constantFrom('same', 'upper', 'lower')).map(([i, a, b, kase]) => {
        const t = texts.length ? texts[i % texts.length]! : '';
        const s = t.slice(Math.min(a, b), Math.max(a, b));
        return kase === 'upper' ? s.toUpperCase() : kase === 'lower' ? s.toLowerCase() : s;
      }),
      text,
    );

  it('for ~, LIKE and ILIKE over random unicode texts and patterns, with and without negation', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(text, text), { minLength: 1, maxLength: 25 }).chain((pairs) =>
          fc.tuple(
            fc.constant(pairs),
            fc.array(fc.tuple(patternFor(pairs.flat()), fc.constantFrom('~', 'like', 'ilike', '!~', 'not ilike'), fc.constantFrom('title', 'description') as fc.Arbitrary<'title' | 'description'>), { minLength: 1, maxLength: 6 }),
            fc.array(fc.nat(), { maxLength: 6 }),
          ),
        ),
        async ([pairs, searches, edits]) => {
          const dir = tempDir();
          const docs: Doc[] = pairs.map(([title, description], i) => ({ _id: `t${i}`, title, description, n: i % 3 }));
          const store = await EmbeddedStore.open({ dir });
          try {
            const tasks = store.collection('tasks');
            await tasks.insertMany(docs);
            const check = async () => {
              for (const [pattern, op, field] of searches) {
                const filter =
                  op === '~' ? tilde(field, pattern) : op === '!~' ? tilde(field, pattern, true)
                  : like(field, pattern, op !== 'like', op === 'not ilike');
                expect(await ids(store, filter)).toEqual(scan(docs, filter));
                const scoped = { $and: [{ n: 1 }, filter] };
                expect(await ids(store, scoped)).toEqual(scan(docs, scoped));
              }
            };
            await check();
            // writes after the searches were cached: updates (text changed or not) and deletes
            for (const e of edits) {
              const i = e % docs.length;
              const doc = docs[i]!;
              if (e % 3 === 0) {
                await tasks.deleteOne({ _id: doc._id });
                docs.splice(i, 1);
                if (docs.length === 0) break;
              } else {
                // a new title, a new description (its title's FTS rows stay), or neither
                const other = pairs[(e >> 3) % pairs.length]!;
                const title = e % 3 === 1 ? other[1] : doc.title;
                const description = e % 3 === 2 && (e >> 2) % 2 === 1 ? other[0] : doc.description;
                await tasks.updateOne({ _id: doc._id }, { $set: { title, description, n: e % 3 } });
                docs[i] = { ...doc, title, description, n: e % 3 };
              }
            }
            await check();
            await store.close();
            // reopened: the FTS table is reused, results unchanged
            const again = await EmbeddedStore.open({ dir });
            try {
              for (const [pattern, , field] of searches) {
                const filter = tilde(field, pattern);
                expect(await ids(again, filter)).toEqual(scan(docs, filter));
              }
            } finally {
              await again.close();
            }
          } finally {
            await store.close();
            rmSync(dir, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('text index: use and upkeep', () => {
  const words = ['payment webhook', 'login redirect', 'Webhook retries', 'billing export', 'WEBHOOK signature'];
  const seed = (n: number): Doc[] =>
    Array.from({ length: n }, (_, i) => ({ _id: `t${String(i).padStart(5, '0')}`, title: `${words[i % words.length]} #${i}`, description: i % 7 === 0 ? 'mentions a webhook' : 'nothing', owner: `u${i % 4}` }));

  it('narrows a substring search to its candidates (documents examined) and answers like the scan', async () => {
    await using store = await EmbeddedStore.open({ dir: tempDir() });
    const docs = seed(2_000);
    await store.collection('tasks').insertMany(docs);
    const filter = tilde('title', 'webhook');
    const before = store.stats.docsExamined;
    const found = await ids(store, filter);
    expect(found).toEqual(scan(docs, filter));
    expect(found.length).toBe(1_200);
    expect(store.stats.docsExamined - before).toBe(1_200); // only the candidates, not the 2,000
    // a pattern the index cannot answer (2 characters) scans every document
    const short = store.stats.docsExamined;
    await ids(store, tilde('title', 'we'));
    expect(store.stats.docsExamined - short).toBe(2_000);
    // a field without the text index scans too
    const other = store.stats.docsExamined;
    await ids(store, { owner: { $regex: 'u1' } });
    expect(store.stats.docsExamined - other).toBe(2_000);
  });

  it('keeps the index in the write: transactions, rollbacks, updates and deletes', async () => {
    await using store = await EmbeddedStore.open({ dir: tempDir() });
    const tasks = store.collection('tasks');
    await tasks.insertMany(seed(50));
    const filter = tilde('title', 'kanban');
    expect(await ids(store, filter)).toEqual([]);
    await store.withTransaction(async (session) => {
      await tasks.updateOne({ _id: 't00001' }, { $set: { title: 'Kanban board' } }, { session });
      await tasks.insertOne({ _id: 'new', title: 'the KANBAN way' }, { session });
      expect(await tasks.countDocuments(filter, { session })).toBe(2); // the transaction sees its writes
      expect(await tasks.countDocuments(filter)).toBe(0); // others do not
    });
    expect(await ids(store, filter)).toEqual(['new', 't00001']);
    await expect(
      store.withTransaction(async (session) => {
        await tasks.updateOne({ _id: 't00002' }, { $set: { title: 'kanban too' } }, { session });
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await ids(store, filter)).toEqual(['new', 't00001']);
    await tasks.deleteOne({ _id: 'new' });
    await tasks.updateOne({ _id: 't00001' }, { $set: { title: 'plain' } });
    expect(await ids(store, filter)).toEqual([]);
  });

  it('writes FTS rows after the document (in batches): a search finds a write before and after its row is written', async () => {
    const dir = tempDir();
    await using store = await EmbeddedStore.open({ dir });
    const tasks = store.collection('tasks');
    await tasks.insertMany(seed(20));
    const filter = tilde('title', 'kanban');
    await tasks.updateOne({ _id: 't00003' }, { $set: { title: 'Kanban lanes' } });
    expect(await ids(store, filter)).toEqual(['t00003']); // still pending or written: found either way
    await tasks.insertOne({ _id: 'fresh', title: 'kanban card' });
    await tasks.deleteOne({ _id: 't00003' });
    expect(await ids(store, filter)).toEqual(['fresh']);
    await flushed(store); // the rows are written
    expect(await ids(store, tilde('title', 'lanes'))).toEqual([]);
    expect(await ids(store, tilde('title', 'kanban card'))).toEqual(['fresh']);
  });

  it('rewrites the FTS rows of the changed fields only, and of every field changed before one flush', async () => {
    const dir = tempDir();
    {
      await using store = await EmbeddedStore.open({ dir });
      const tasks = store.collection('tasks');
      await tasks.insertMany([
        { _id: 'a', title: 'Alpaca title', description: 'Alpaca notes' },
        { _id: 'b', title: 'Bison title', description: 'Bison notes' },
      ]);
      await flushed(store); // nothing pending
      await tasks.updateOne({ _id: 'a' }, { $set: { title: 'Camel title' } });
      await flushed(store); // the title's rows rewritten, the description's kept
      expect(await ids(store, tilde('description', 'alpaca'))).toEqual(['a']);
      expect(await ids(store, tilde('title', 'camel'))).toEqual(['a']);
      expect(await ids(store, tilde('title', 'alpaca'))).toEqual([]);
      // two changes of different fields before one flush: both fields rewritten
      await tasks.updateOne({ _id: 'b' }, { $set: { title: 'Dingo title' } });
      await tasks.updateOne({ _id: 'b' }, { $set: { description: 'Dingo notes' } });
      await flushed(store);
      expect(await ids(store, tilde('title', 'dingo'))).toEqual(['b']);
      expect(await ids(store, tilde('description', 'dingo'))).toEqual(['b']);
    }
    // reopened (nothing pending): answered by the FTS rows alone
    await using again = await EmbeddedStore.open({ dir });
    expect(await ids(again, tilde('description', 'alpaca'))).toEqual(['a']);
    expect(await ids(again, tilde('title', 'camel'))).toEqual(['a']);
    expect(await ids(again, tilde('title', 'dingo'))).toEqual(['b']);
    expect(await ids(again, tilde('description', 'notes'))).toEqual(['a', 'b']);
    expect(await ids(again, tilde('description', 'bison'))).toEqual([]);
  });

  it('finds a text change applied in memory whose grouped journal write is still to come (a new search, in both durabilities)', async () => {
    for (const sync of ['full', 'normal'] as const) {
      await using store = await EmbeddedStore.open({ dir: tempDir(), sync });
      const tasks = store.collection('tasks');
      await tasks.insertMany(seed(20));
      await flushed(store); // the seeds' FTS rows are written: none is pending
      // not awaited: applied in memory at once, journaled with its group later (docs/store.md "Group commit")
      const written = tasks.updateOne({ _id: 't00004' }, { $set: { title: 'Zebra crossing' } });
      const seen = ids(store, tilde('title', 'zebra')); // a search never asked before: answered by the FTS table
      const twice = tasks.updateOne({ _id: 't00004' }, { $set: { title: 'zebra twice' } });
      expect(await seen).toEqual(['t00004']);
      await written;
      expect(await ids(store, tilde('title', 'crossing'))).toEqual([]);
      await twice;
      expect(await ids(store, tilde('title', 'zebra t'))).toEqual(['t00004']);
      await flushed(store); // the FTS rows are written
      expect(await ids(store, tilde('title', 'ebra tw'))).toEqual(['t00004']);
      expect(await ids(store, tilde('title', 'crossing'))).toEqual([]);
    }
  });

  it('finds a new document and forgets a deleted one before their grouped journal write (both durabilities)', async () => {
    for (const sync of ['full', 'normal'] as const) {
      await using store = await EmbeddedStore.open({ dir: tempDir(), sync });
      const tasks = store.collection('tasks');
      await tasks.insertMany(seed(20));
      await flushed(store); // nothing pending
      // not awaited: applied in memory at once (with its new rowid), journaled with its group later
      const inserted = tasks.insertOne({ _id: 'new1', title: 'Quokka sighting', description: '', status: 'todo' });
      const deleted = tasks.deleteOne({ _id: 't00003' });
      const seen = ids(store, tilde('title', 'quokka'));
      const gone = ids(store, { _id: 't00003' });
      expect(await seen).toEqual(['new1']);
      expect(await gone).toEqual([]);
      await Promise.all([inserted, deleted]);
      await flushed(store); // the FTS rows are written
      expect(await ids(store, tilde('title', 'okka sig'))).toEqual(['new1']);
    }
  });

  it('indexes at open the documents whose FTS rows a crash left unwritten (text_pending)', async () => {
    const dir = tempDir();
    const docs = seed(100);
    {
      await using store = await EmbeddedStore.open({ dir });
      await store.collection('tasks').insertMany(docs);
    }
    // as after a crash between a write and its FTS rows: the rows are missing, the marks are there
    const raw = new Database(join(dir, 'store.sqlite'));
    const rowids = raw.prepare("SELECT rowid FROM docs WHERE coll = 'tasks' AND id IN ('t00002', 't00007', 't00014')").pluck().all() as number[];
    expect(rowids).toHaveLength(3);
    for (const rowid of rowids) {
      for (const field of ['title', 'description']) raw.prepare(`DELETE FROM text_tasks_${field} WHERE rowid = ?`).run(rowid);
      raw.prepare("INSERT INTO text_pending (coll, rowid) VALUES ('tasks', ?)").run(rowid);
    }
    raw.close();
    const filter = tilde('description', 'webhook');
    {
      await using store = await EmbeddedStore.open({ dir });
      expect(await ids(store, filter)).toEqual(scan(docs, filter));
      expect(await ids(store, filter)).toContain('t00007');
    }
    const after = new Database(join(dir, 'store.sqlite'));
    expect(after.prepare('SELECT count(*) FROM text_pending').pluck().get()).toBe(0);
    after.close();
  });

  it('marks only changes of existing documents in text_pending; new ones above the watermark are indexed at open after a crash', async () => {
    const dir = tempDir();
    const docs = seed(60);
    {
      await using store = await EmbeddedStore.open({ dir });
      await store.collection('tasks').insertMany(docs.slice(0, 40)); // flushed at close: below the watermark
    }
    const pendingRows = (db: Database.Database) => db.prepare("SELECT rowid FROM text_pending WHERE coll = 'tasks' ORDER BY rowid").pluck().all();
    const watermark = (db: Database.Database) => db.prepare('SELECT rowid FROM text_watermark').pluck().get() as number;
    const rowidOf = (db: Database.Database, id: string) => db.prepare('SELECT rowid FROM docs WHERE id = ?').pluck().get(id) as number;
    const raw = new Database(join(dir, 'store.sqlite'));
    const flushed = watermark(raw);
    expect(flushed).toBe(raw.prepare("SELECT max(rowid) FROM docs WHERE coll = 'tasks'").pluck().get());
    raw.close();
    {
      // as a crash before the FTS flush: the store's flush never runs, not even at close
      const store = await EmbeddedStore.open({ dir });
      const journal = (store as unknown as { journal: { db: Database.Database; text: { flushPending(): void } } }).journal;
      journal.text.flushPending = () => undefined;
      await store.collection('tasks').insertMany(docs.slice(40));
      await store.collection('tasks').updateOne({ _id: docs[3]!._id }, { $set: { description: 'Otter webhook relay' } });
      // journaled, FTS rows not written: the update of an existing document is marked, the new ones are not
      expect(journal.db.prepare("SELECT count(*) FROM docs WHERE coll = 'tasks'").pluck().get()).toBe(60);
      expect(pendingRows(journal.db)).toEqual([rowidOf(journal.db, docs[3]!._id)]);
      expect(watermark(journal.db)).toBe(flushed);
      expect(rowidOf(journal.db, docs[40]!._id)).toBeGreaterThan(flushed);
      await store.close();
    }
    const all = docs.map((d, i) => (i === 3 ? { ...d, description: 'Otter webhook relay' } : d));
    {
      await using store = await EmbeddedStore.open({ dir });
      for (const filter of [tilde('description', 'webhook'), tilde('title', String(docs[45]!.title)), tilde('description', 'otter')]) {
        const before = store.stats.docsExamined;
        expect(await ids(store, filter)).toEqual(scan(all, filter));
        expect(store.stats.docsExamined - before).toBe(scan(all, filter).length); // from the index, not a scan
      }
    }
    const after = new Database(join(dir, 'store.sqlite'));
    expect(pendingRows(after)).toEqual([]);
    expect(watermark(after)).toBe(after.prepare("SELECT max(rowid) FROM docs WHERE coll = 'tasks'").pluck().get());
    after.close();
  });

  it(`sets FTS5 automerge ${FTS_AUTOMERGE} on every text table at open, also on tables made with SQLite's default`, async () => {
    const dir = tempDir();
    const automerge = (db: Database.Database) =>
      ['title', 'description'].map((f) => db.prepare(`SELECT v FROM text_tasks_${f}_config WHERE k = 'automerge'`).pluck().get());
    {
      await using store = await EmbeddedStore.open({ dir });
      await store.collection('tasks').insertMany(seed(20));
    }
    const raw = new Database(join(dir, 'store.sqlite'));
    expect(automerge(raw)).toEqual([FTS_AUTOMERGE, FTS_AUTOMERGE]);
    // as tables made before the setting: SQLite's default
    for (const f of ['title', 'description']) raw.exec(`INSERT INTO text_tasks_${f} (text_tasks_${f}, rank) VALUES ('automerge', 4)`);
    expect(automerge(raw)).toEqual([4, 4]);
    raw.close();
    {
      await using store = await EmbeddedStore.open({ dir });
      expect(await ids(store, tilde('description', 'webhook'))).toEqual(scan(seed(20), tilde('description', 'webhook')));
    }
    const after = new Database(join(dir, 'store.sqlite'));
    expect(automerge(after)).toEqual([FTS_AUTOMERGE, FTS_AUTOMERGE]);
    after.close();
  });

  it('builds the FTS table at open for a data dir written before the text index, and rebuilds a stale one', async () => {
    const dir = tempDir();
    const docs = seed(300);
    // a store file as a journal without the text index writes it: only the docs table
    const db = new Database(join(dir, 'store.sqlite'));
    db.exec('CREATE TABLE docs (coll TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (coll, id))');
    const insert = db.prepare('INSERT INTO docs (coll, id, body) VALUES (?, ?, ?)');
    for (const d of docs) insert.run('tasks', d._id, JSON.stringify(d));
    db.close();
    const filter = tilde('description', 'WebHook');
    {
      await using store = await EmbeddedStore.open({ dir });
      const before = store.stats.docsExamined;
      expect(await ids(store, filter)).toEqual(scan(docs, filter));
      expect(store.stats.docsExamined - before).toBe(scan(docs, filter).length); // served by the index
      // the (coll, id) key of that journal is dropped at open (rows are addressed by rowid), rowids
      // kept: the text index still finds each document, written after the copy too
      await store.collection('tasks').updateOne({ _id: docs[5]!._id }, { $set: { title: 'Platypus migration' } });
      await store.collection('tasks').insertOne({ _id: 'after-copy', title: 'Platypus twin', description: '', status: 'todo' });
    }
    const copied = new Database(join(dir, 'store.sqlite'));
    expect(copied.prepare("SELECT sql FROM sqlite_master WHERE name = 'docs'").pluck().get()).not.toMatch(/PRIMARY KEY/);
    expect(copied.prepare("SELECT rowid FROM docs WHERE id = ?").pluck().get(docs[7]!._id)).toBe(8); // first-insert order kept
    copied.close();
    {
      await using store = await EmbeddedStore.open({ dir });
      expect(await ids(store, tilde('title', 'platypus'))).toEqual(['after-copy', docs[5]!._id].sort());
      expect(await store.collection('tasks').countDocuments({})).toBe(301);
    }
    // an index of another version is rebuilt: here version 1's one two-column table (detail=full),
    // replaced by one table per field and dropped
    const raw = new Database(join(dir, 'store.sqlite'));
    raw.exec("DROP TABLE text_tasks_title; DROP TABLE text_tasks_description; UPDATE text_meta SET version = 1");
    raw.exec("CREATE VIRTUAL TABLE text_tasks USING fts5(title, description, tokenize = 'trigram case_sensitive 1', content = '', contentless_delete = 1)");
    raw.close();
    {
      await using store = await EmbeddedStore.open({ dir });
      expect(await ids(store, filter)).toEqual(scan(docs, filter));
      expect(await ids(store, tilde('title', 'platypus'))).toEqual(['after-copy', docs[5]!._id].sort());
    }
    const rebuilt = new Database(join(dir, 'store.sqlite'));
    const tables = rebuilt.prepare("SELECT name FROM sqlite_master WHERE name IN ('text_tasks', 'text_tasks_title', 'text_tasks_description') ORDER BY name").pluck().all();
    expect(tables).toEqual(['text_tasks_description', 'text_tasks_title']);
    expect(rebuilt.prepare("SELECT version FROM text_meta WHERE coll = 'tasks'").pluck().get()).toBe(TEXT_INDEX_VERSION);
    rebuilt.close();
  });
});
