/** Shared look of the page's uPlot axes: dark ink, light grid, grey ticks. */
export const AXIS = { stroke: '#1d2430', grid: { stroke: '#e3e6eb' }, ticks: { stroke: '#c5cad3' } };

/** `YYYY-MM-DD` (or any instant) → "Nov 28", in UTC. */
export const shortDay = (d: string | number | Date) =>
  new Date(typeof d === 'string' && d.length === 10 ? `${d}T00:00:00Z` : d).toLocaleDateString('en', { month: 'short', day: 'numeric', timeZone: 'UTC' });

/**
 * uPlot `splits` for an axis of whole days `[lo, hi]` (days since 1970): a tick every n-th day so
 * that labels keep about 64 px apart at the chart's current width (read at each draw, so a chart
 * resized to a phone's width thins its ticks).
 */
export function daySplits(width: number, lo: number, hi: number): number[] {
  const first = Math.ceil(lo);
  const count = Math.max(1, Math.floor(hi) - first + 1);
  const every = Math.max(1, Math.ceil(count / Math.max(2, Math.floor(width / 64))));
  const out: number[] = [];
  for (let d = first; d <= hi; d += every) out.push(d);
  return out;
}
