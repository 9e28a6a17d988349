/** Small DOM helpers the loader and the panel share: no innerHTML anywhere (Trusted Types, CSP). */

const SVG = "http://www.w3.org/2000/svg";

/**
 * A 20 px icon from one SVG path, filled (or, `stroked`, drawn as a line), hidden from screen
 * readers (its button carries the label).
 */
export function icon(path: string, stroked = false): SVGSVGElement {
  const svg = document.createElementNS(SVG, "svg");
  if (stroked) svg.setAttribute("class", "stroke");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("width", "20");
  svg.setAttribute("height", "20");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  const shape = document.createElementNS(SVG, "path");
  shape.setAttribute("d", path);
  svg.append(shape);
  return svg;
}

/** Black or white, whichever reads better on `#rrggbb` (WCAG relative luminance). */
export function onAccent(color: string): string {
  const channel = (offset: number) => {
    const value = Number.parseInt(color.slice(offset, offset + 2), 16) / 255;
    return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
  };
  const luminance = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
  // Contrast with white (1.05 / (L + 0.05)) against with black ((L + 0.05) / 0.05).
  return 1.05 / (luminance + 0.05) >= (luminance + 0.05) / 0.05 ? "#ffffff" : "#111111";
}

/** An element with attributes (`class`, `aria-*`, …) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  element.append(...children);
  return element;
}
