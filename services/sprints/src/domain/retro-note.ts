import type { Member } from './members.js';
import type { Target } from './target.js';

/** What the retro note summarises (docs/architecture.md §8). Dates are ISO 8601 UTC strings. */
export interface Retro {
  sprint: { id: string; title: string; kickoff?: string | undefined; deadline?: string | undefined };
  finished: readonly Member[];
  unfinished: readonly Member[];
  /** Unfinished members the closer could read but not write: left in the sprint. */
  skipped?: readonly Member[];
  target: Target;
  velocity: number;
  closedAt: string;
  closedBy: string;
}

/** User text on one markdown line: line breaks and runs of spaces become one space. */
const inline = (text: string) => text.replace(/\s+/g, ' ').trim();
const item = (m: Member, detail: string) => `- ${inline(m.title)} (\`${m.id}\`): ${detail}`;
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * The markdown of the retro note written on the sprint by close-sprint (docs/architecture.md §8; format in
 * docs/sprints.md): dates, velocity, the finished items with their points, and the rolled-over
 * items with their status and target; unfinished items the closer could not write are listed as
 * left in the sprint.
 */
export function renderRetroNote(r: Retro): string {
  const unpointed = r.finished.filter((m) => m.points === undefined).length;
  const t = r.target;
  const rolled =
    r.unfinished.length === 0 || t.kind === 'none'
      ? ['_Nothing was left unfinished._']
      : [
          `Moved to ${t.kind === 'backlog' ? 'the backlog' : `sprint "${inline(t.title)}" (\`${t.id}\`)`}:`,
          '',
          ...r.unfinished.map((m) => item(m, `status \`${inline(m.status)}\``)),
        ];
  const lines = [
    `## Sprint retro: ${inline(r.sprint.title)}`,
    '',
    `- Closed: ${r.closedAt} by \`${r.closedBy}\``,
    `- Window: ${r.sprint.kickoff ?? 'no kickoff'} to ${r.sprint.deadline ?? 'no deadline'}`,
    `- Velocity: **${r.velocity}** points from ${plural(r.finished.length, 'finished item')}` +
      (unpointed > 0 ? ` (${unpointed} without numeric points)` : ''),
    '',
    `### Finished (${r.finished.length})`,
    '',
    ...(r.finished.length > 0 ? r.finished.map((m) => item(m, m.points === undefined ? 'no points' : plural(m.points, 'point'))) : ['_None._']),
    '',
    `### Rolled over (${r.unfinished.length})`,
    '',
    ...rolled,
    '',
    ...(r.skipped?.length
      ? [`### Left in the sprint (${r.skipped.length})`, '', '_Read-only for the closer, so not moved:_', '', ...r.skipped.map((m) => item(m, `status \`${inline(m.status)}\``)), '']
      : []),
  ];
  return lines.join('\n');
}
