/**
 * Hand-made SVG charts (no chart library: a few hundred bytes instead of tens of kilobytes). Each
 * chart is one image named for screen readers, with its numbers in a table right below it. A chart
 * is drawn at the width it is shown at (one unit a pixel), so its labels keep their size on a phone
 * rather than shrinking with the picture.
 */
import type { RefObject } from "preact";
import { useLayoutEffect, useRef, useState } from "preact/hooks";

export const palette = [
  "#1d4ed8",
  "#0891b2",
  "#7c3aed",
  "#db2777",
  "#ea580c",
  "#65a30d",
  "#475569",
  "#ca8a04",
];

export interface Series {
  name: string;
  color: string;
  values: number[];
}

/** The width drawn before the figure was measured. */
const DEFAULT_WIDTH = 720;
const HEIGHT = 220;
const LEFT = 36;
const BOTTOM = 24;
const TOP = 8;
/** Room each day label needs ("11/27" at 12 px). */
const DAY_LABEL_WIDTH = 44;
const FONT_SIZE = 12;

/** The element's width in CSS pixels, followed as it changes. */
function useWidth(): [RefObject<HTMLElement | null>, number] {
  const element = useRef<HTMLElement>(null);
  const [width, setWidth] = useState(DEFAULT_WIDTH);
  useLayoutEffect(() => {
    const target = element.current;
    if (!target) return;
    const measure = () => setWidth(Math.max(200, Math.floor(target.clientWidth)));
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(target);
    return () => observer.disconnect();
  }, []);
  return [element, width];
}

function niceMax(value: number): number {
  if (value <= 4) return 4;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  const steps = [1, 2, 2.5, 5, 10];
  for (const step of steps) if (value <= step * magnitude) return step * magnitude;
  return 10 * magnitude;
}

const shortDay = (day: string) => day.slice(5).replace("-", "/");

/** Stacked bars, one per label (a day), one colour per series. */
export function StackedBars({
  id,
  title,
  labels,
  series,
}: {
  id: string;
  title: string;
  labels: string[];
  series: Series[];
}) {
  const [figure, width] = useWidth();
  const totals = labels.map((_, index) => series.reduce((sum, one) => sum + (one.values[index] ?? 0), 0));
  const max = niceMax(Math.max(0, ...totals));
  const plotWidth = width - LEFT - 4;
  // Every day labelled that fits, evenly spaced.
  const labelEvery = Math.max(
    1,
    Math.ceil(labels.length / Math.max(1, Math.floor(plotWidth / DAY_LABEL_WIDTH))),
  );
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const slot = plotWidth / Math.max(1, labels.length);
  const bar = Math.max(2, slot * 0.7);
  const y = (value: number) => TOP + plotHeight - (value / max) * plotHeight;
  const ticks = [0, max / 2, max];
  const sum = totals.reduce((a, b) => a + b, 0);
  return (
    <figure class="chart" ref={figure}>
      <svg viewBox={`0 0 ${width} ${HEIGHT}`} role="img" aria-labelledby={`${id}-title`}>
        <title id={`${id}-title`}>{`${title}: ${sum} in ${labels.length} days`}</title>
        {ticks.map((tick) => (
          <g key={tick}>
            <line x1={LEFT} x2={width} y1={y(tick)} y2={y(tick)} stroke="#e5e7eb" />
            <text x={LEFT - 6} y={y(tick) + 4} text-anchor="end" font-size={FONT_SIZE} fill="#4b5563">
              {Number.isInteger(tick) ? tick : tick.toFixed(1)}
            </text>
          </g>
        ))}
        {labels.map((label, index) => {
          let base = 0;
          const x = LEFT + index * slot + (slot - bar) / 2;
          return (
            <g key={label}>
              {series.map((one) => {
                const value = one.values[index] ?? 0;
                if (value === 0) return null;
                const top = y(base + value);
                const height = y(base) - top;
                base += value;
                return (
                  <rect key={one.name} x={x} y={top} width={bar} height={height} fill={one.color} rx="1.5" />
                );
              })}
              {index % labelEvery === 0 && (
                <text
                  x={x + bar / 2}
                  y={HEIGHT - 6}
                  text-anchor="middle"
                  font-size={FONT_SIZE}
                  fill="#4b5563"
                >
                  {shortDay(label)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      {series.length > 1 && (
        <ul class="legend">
          {series.map((one) => (
            <li key={one.name}>
              <span class="swatch" style={`background:${one.color}`} aria-hidden="true" />
              {one.name}
            </li>
          ))}
        </ul>
      )}
      <details>
        <summary>{title} as a table</summary>
        <div class="overflow-auto">
          <table>
            <thead>
              <tr>
                <th scope="col">Day</th>
                {series.map((one) => (
                  <th scope="col" key={one.name}>
                    {one.name}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {labels.map((label, index) => (
                <tr key={label}>
                  <th scope="row">{label}</th>
                  {series.map((one) => (
                    <td key={one.name}>{one.values[index] ?? 0}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}

/** Horizontal bars for a handful of named totals. */
export function TotalsBars({
  id,
  title,
  items,
}: {
  id: string;
  title: string;
  items: { name: string; value: number; color: string }[];
}) {
  const [figure, width] = useWidth();
  const max = niceMax(Math.max(0, ...items.map((item) => item.value)));
  const row = 28;
  const height = items.length * row + 8;
  const labelWidth = 110;
  const plot = width - labelWidth - 50;
  return (
    <figure class="chart" ref={figure}>
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-labelledby={`${id}-title`}>
        <title id={`${id}-title`}>
          {`${title}: ${items.map((item) => `${item.name} ${item.value}`).join(", ")}`}
        </title>
        {items.map((item, index) => (
          <g key={item.name}>
            <text
              x={labelWidth - 8}
              y={index * row + 22}
              text-anchor="end"
              font-size={FONT_SIZE}
              fill="#374151"
            >
              {item.name}
            </text>
            <rect
              x={labelWidth}
              y={index * row + 8}
              width={Math.max(item.value > 0 ? 2 : 0, (item.value / max) * plot)}
              height={row - 10}
              fill={item.color}
              rx="2"
            />
            <text
              x={labelWidth + (item.value / max) * plot + 6}
              y={index * row + 22}
              font-size={FONT_SIZE}
              fill="#111827"
            >
              {item.value}
            </text>
          </g>
        ))}
      </svg>
      <details>
        <summary>{title} as a table</summary>
        <table>
          <tbody>
            {items.map((item) => (
              <tr key={item.name}>
                <th scope="row">{item.name}</th>
                <td>{item.value}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
