import { useCallback, useState, type FormEvent } from 'react';
import type { Api } from '../api/client.js';
import { QueryInput } from './QueryInput.js';
import { namesToKeys, TYPE_OPERATORS, useBoardFields } from './customFields.js';

/** The filters a board page applies to its column reads (combined by `columnFilter` in state.ts). */
export interface Filters {
  /** Query-language text (docs/query-language.md), ANDed onto every column query. */
  query: string;
  /** Plain words: each must be in the title or the description (`~`). */
  search: string;
  /** Only cards assigned to the logged-in user. */
  mine: boolean;
}

export const NO_FILTERS: Filters = { query: '', search: '', mine: false };

/** A refused filter: the server's message and, for a query-language error, the position in the user's text. */
export interface FilterError {
  message: string;
  position?: number;
  text: string;
}

/**
 * The board's filter bar, the one place where the page's filter inputs live: the query-language
 * filter (a 400 shows the server's message with a caret under its position), the plain search and
 * the one-click "assigned to me" toggle. `onApply` reads the columns with the new filters and
 * answers the error to show, or null when they were applied. The board's custom fields are
 * offered by name with their operators ("Fields"), and may be written by name in the filter
 * (`Priority = P1` is sent as `cf.priority = 'P1'`, {@link namesToKeys}).
 */
export function FilterBar(p: {
  applied: Filters;
  onApply: (f: Filters) => Promise<FilterError | null>;
  /** The API and the board the query filter is checked against as the user types, and whose saved views are offered ({@link QueryInput}). */
  api: Api;
  boardId: string;
}) {
  const [query, setQuery] = useState(p.applied.query);
  const [search, setSearch] = useState(p.applied.search);
  const [error, setError] = useState<FilterError | null>(null);

  const apply = async (next: Filters) => setError(await p.onApply(next));
  const { fields } = useBoardFields();
  const translate = useCallback((text: string) => namesToKeys(text, fields), [fields]);

  function submit(e: FormEvent) {
    e.preventDefault();
    void apply({ ...p.applied, query: translate(query.trim()) });
  }

  return (
    <>
      <form className="filter" onSubmit={submit} role="search" aria-label="Filter cards">
        <label htmlFor="filter-input">Filter</label>
        <QueryInput api={p.api} boardId={p.boardId} value={query} onChange={setQuery} applyErrorId={error ? 'filter-error' : undefined} translate={translate} />
        {fields.length > 0 && (
          <select
            aria-label="Insert a field"
            className="field-picker"
            value=""
            onChange={(e) => {
              const f = fields.find((x) => x.key === e.target.value);
              if (f) setQuery((q) => `${q.trim() ? `${q.trim()} AND ` : ''}${f.name} ${TYPE_OPERATORS[f.type]?.[0] ?? '='} `);
            }}
          >
            <option value="">Fields…</option>
            {fields.map((f) => (
              <option key={f.key} value={f.key}>
                {f.name} ({f.type}: {(TYPE_OPERATORS[f.type] ?? []).join(' ')})
              </option>
            ))}
          </select>
        )}
        <button type="submit">Apply</button>
        {/* Always there (disabled when there is nothing to clear), so the toolbar does not reflow. */}
        <button
            type="button"
            className="secondary"
            disabled={!p.applied.query && !error && !query}
            onClick={() => {
              setQuery('');
              void apply({ ...p.applied, query: '' });
            }}
          >
            Clear
          </button>
      </form>
      <form
        className="search"
        role="search"
        aria-label="Search cards"
        onSubmit={(e) => {
          e.preventDefault();
          void apply({ ...p.applied, search: search.trim() });
        }}
      >
        <label htmlFor="search-input">Search</label>
        <input
          id="search-input"
          name="search"
          type="search"
          placeholder="words in titles and descriptions"
          value={search}
          onChange={(e) => {
            setSearch(e.target.value);
            if (e.target.value === '' && p.applied.search) void apply({ ...p.applied, search: '' });
          }}
        />
        <button type="submit" className="secondary">
          Search
        </button>
      </form>
      <button
        type="button"
        className={p.applied.mine ? 'toggle on' : 'toggle secondary'}
        aria-pressed={p.applied.mine}
        onClick={() => void apply({ ...p.applied, mine: !p.applied.mine })}
      >
        Assigned to me
      </button>
      {error && (
        <div id="filter-error" className="filter-error" role="alert">
          <p>
            {error.position !== undefined ? `At position ${error.position}: ` : ''}
            {error.message}
          </p>
          {error.position !== undefined && (
            <pre aria-hidden="true" data-testid="filter-caret">
              {error.text}
              {'\n'}
              {' '.repeat(Math.min(error.position, error.text.length))}^
            </pre>
          )}
        </div>
      )}
    </>
  );
}
