import { useEffect, useRef, useState } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

/**
 * A uPlot chart that fills its container's width (so it stays readable at 360 px) and follows
 * resizes. `build` makes the options for a width; `data` is uPlot's columnar data. The canvas is
 * hidden from screen readers: every chart of the page has a text table beside it.
 */
export function Chart(p: { label: string; height?: number; data: uPlot.AlignedData; build: (width: number, height: number) => uPlot.Options; testId?: string }) {
  const box = useRef<HTMLDivElement>(null);
  const [axisTitles, setAxisTitles] = useState('');
  const { data, build } = p;
  const height = p.height ?? 220;
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const width = () => Math.max(240, Math.floor(el.clientWidth));
    const opts = build(width(), height);
    // The canvas draws the axis titles; the container names them too (tests and tools read them).
    setAxisTitles((opts.axes ?? []).map((a) => a.label ?? '').join(' | '));
    const plot = new uPlot(opts, data, el);
    const ro = new ResizeObserver(() => plot.setSize({ width: width(), height }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      plot.destroy();
    };
  }, [data, build, height]);
  return <div ref={box} className="chart" aria-hidden="true" data-testid={p.testId} data-axis-titles={axisTitles} title={p.label} />;
}
