/**
 * Layout checks for a console page as it stands in the browser: nothing sticks out sideways (the
 * window needs no horizontal scrolling), no two pieces of text or controls are drawn over each
 * other, no text is smaller than 11 px (SVG text included, at the size it is drawn), no control
 * clips the value it shows (a drop-down too narrow for its choice) and no button's label wraps,
 * the fields and buttons of a form row line up, the cells of an even grid are equal, no list
 * marker stands beside a card, and only the current page's navigation entry is highlighted.
 * `checkLayout` runs them all; test/browser/layout.test.ts runs it on every page of
 * `consolePages` at 1280 and 375 px.
 */
import type { Page } from "playwright-core";
import { expect } from "vitest";

export interface LayoutProblems {
  /** Elements past the window's right edge (outside boxes that scroll on their own). */
  overflow: string[];
  /** Pairs of texts or controls drawn over each other. */
  overlaps: string[];
  /** Text drawn smaller than 11 px. */
  smallText: string[];
  /** Controls too narrow for the text they show. */
  clipped: string[];
  /** Main-navigation entries highlighted other than the current page's. */
  highlights: string[];
  /** A form's fields and buttons side by side whose bottom edges differ. */
  misaligned: string[];
  /** Cells of a grid of equal columns that are not as wide as their column. */
  unequal: string[];
  /** List markers (bullets) beside cards. */
  strayMarkers: string[];
}

/** The smallest text size allowed, in CSS pixels. */
export const MIN_TEXT_PX = 11;

/**
 * Evaluated in the page as a string (this file is compiled without the DOM's types). Only what a
 * person sees counts: hidden, visually hidden (1 px) and zero-size boxes are left out, and so is
 * what lies inside a box that scrolls on its own (a wide table in `.overflow-auto`).
 */
const measure = `((minText) => {
  const describe = (element) => {
    const tag = element.tagName.toLowerCase();
    const name = (element.getAttribute("aria-label") || element.textContent || "").trim().replace(/\\s+/g, " ").slice(0, 40);
    const classes = typeof element.className === "string" && element.className ? "." + element.className.trim().split(/\\s+/).join(".") : "";
    return tag + classes + (name ? ' "' + name + '"' : "");
  };
  const visible = (element) => {
    for (let node = element; node && node.nodeType === 1; node = node.parentElement) {
      const style = getComputedStyle(node);
      if (style.display === "none" || style.visibility === "hidden" || Number(style.opacity) === 0) return false;
      if (style.clip === "rect(0px, 0px, 0px, 0px)" || style.clipPath === "inset(50%)") return false;
    }
    const box = element.getBoundingClientRect();
    return box.width > 1 && box.height > 1;
  };
  const scrollsOnItsOwn = (element) => {
    for (let node = element.parentElement; node && node !== document.body; node = node.parentElement) {
      const style = getComputedStyle(node);
      if (/(auto|scroll)/.test(style.overflowX) || /(auto|scroll)/.test(style.overflowY)) return node;
    }
    return null;
  };
  const inClosedPart = (element) => element.closest("dialog:not([open]), details:not([open]) > :not(summary), template, select, option, datalist, textarea, script, style, title, noscript");

  // Overflow: the innermost elements that stick out past the right edge.
  const overflow = [];
  if (document.documentElement.scrollWidth > window.innerWidth) {
    const out = [...document.querySelectorAll("body *")].filter((element) => !scrollsOnItsOwn(element) && visible(element) && element.getBoundingClientRect().right > window.innerWidth + 1);
    for (const element of out.filter((element) => !out.some((other) => other !== element && element.contains(other))).slice(0, 8)) {
      overflow.push(describe(element) + " reaches " + Math.round(element.getBoundingClientRect().right) + " px");
    }
    if (overflow.length === 0) overflow.push("the page is " + document.documentElement.scrollWidth + " px wide");
  }

  // What is drawn: each run of text (its lines' boxes) and each control.
  const pieces = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const smallText = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.textContent.trim()) continue;
    const element = node.parentElement;
    if (!element || inClosedPart(element) || !visible(element)) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    const boxes = [...range.getClientRects()].filter((box) => box.width > 0.5 && box.height > 0.5);
    if (boxes.length === 0) continue;
    let size = parseFloat(getComputedStyle(element).fontSize);
    const svg = element.closest("svg");
    if (svg && element instanceof SVGGraphicsElement) {
      const matrix = element.getScreenCTM();
      if (matrix) size = size * Math.hypot(matrix.a, matrix.b);
    }
    if (size < minText - 0.05) smallText.push(describe(element) + " at " + size.toFixed(1) + " px");
    pieces.push({ element, boxes, scroller: scrollsOnItsOwn(element) });
  }
  for (const element of document.querySelectorAll("button, input:not([type=hidden]), select, textarea, [role=button], img, progress, meter")) {
    if (inClosedPart(element) && element.tagName !== "SELECT" && element.tagName !== "TEXTAREA") continue;
    if (element.closest("dialog:not([open]), details:not([open]) > :not(summary)") || !visible(element)) continue;
    pieces.push({ element, boxes: [element.getBoundingClientRect()], scroller: scrollsOnItsOwn(element) });
  }

  // Overlaps: two pieces whose boxes cross by more than 2 px each way, neither inside the other.
  const overlaps = [];
  const seen = new Set();
  const crosses = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 2 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 2;
  for (let i = 0; i < pieces.length; i++) {
    for (let j = i + 1; j < pieces.length; j++) {
      const a = pieces[i];
      const b = pieces[j];
      if (a.element === b.element || a.element.contains(b.element) || b.element.contains(a.element)) continue;
      // A label and the control it names, or a control and its own text, belong together.
      const labelA = a.element.closest("label");
      if (labelA && labelA.contains(b.element)) continue;
      const labelB = b.element.closest("label");
      if (labelB && labelB.contains(a.element)) continue;
      if (!a.boxes.some((box) => b.boxes.some((other) => crosses(box, other)))) continue;
      const key = describe(a.element) + " × " + describe(b.element);
      if (seen.has(key)) continue;
      seen.add(key);
      overlaps.push(key);
      if (overlaps.length >= 10) break;
    }
    if (overlaps.length >= 10) break;
  }

  // Controls too narrow for what they show: a drop-down's chosen option, a button's label.
  const clipped = [];
  const canvas = document.createElement("canvas").getContext("2d");
  for (const element of document.querySelectorAll("select, button, input[type=submit], input[type=button]")) {
    if (element.closest("dialog:not([open])") || !visible(element)) continue;
    const style = getComputedStyle(element);
    canvas.font = style.fontWeight + " " + style.fontSize + " " + style.fontFamily;
    const room = element.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    let text = "";
    if (element.tagName === "SELECT") text = element.selectedOptions[0] ? element.selectedOptions[0].textContent : "";
    else if (element.tagName === "INPUT") text = element.value;
    else if (style.whiteSpace === "nowrap" || style.whiteSpace === "pre") {
      // The text shown: not what is there for screen readers only.
      const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (node.parentElement && visible(node.parentElement)) text += node.textContent;
      }
    }
    if (!text.trim()) continue;
    const needed = canvas.measureText(text.trim()).width;
    if (needed > room + 1) clipped.push(describe(element) + " shows " + Math.round(needed) + " px of text in " + Math.round(room) + " px");
  }
  // A button's label on one line: a label that wraps says too much for its place.
  for (const element of document.querySelectorAll("button, a[role=button]")) {
    if (element.closest("dialog:not([open])") || !visible(element) || !element.textContent.trim()) continue;
    const range = document.createRange();
    range.selectNodeContents(element);
    // Lines are bands one below the other (a badge beside the text, centred, is on the same line).
    const boxes = [...range.getClientRects()].filter((box) => box.width > 1 && box.height > 1).sort((a, b) => a.top - b.top);
    let lines = 0;
    let lineBottom = -Infinity;
    for (const box of boxes) {
      if (box.top >= lineBottom - 1) {
        lines += 1;
        lineBottom = box.bottom;
      } else lineBottom = Math.max(lineBottom, box.bottom);
    }
    if (lines > 1) clipped.push(describe(element) + " wraps onto " + lines + " lines");
  }
  for (const element of document.querySelectorAll("button, a, h1, h2, h3, th, td, label, .badge")) {
    if (!visible(element) || inClosedPart(element)) continue;
    const style = getComputedStyle(element);
    if (style.overflowX === "hidden" && element.scrollWidth > element.clientWidth + 1) clipped.push(describe(element) + " is cut off");
  }

  // The main navigation: only the current page's entry stands out.
  const highlights = [];
  for (const link of [...document.querySelectorAll('nav[aria-label="Main"] a')].filter(visible)) {
    const color = getComputedStyle(link).backgroundColor;
    const marked = color !== "rgba(0, 0, 0, 0)" && color !== "transparent";
    const current = link.getAttribute("aria-current") === "page";
    if (marked !== current) highlights.push(describe(link) + (marked ? " is highlighted but not current" : " is current but not highlighted"));
  }
  // A form's fields and buttons that stand side by side line up at the bottom.
  const misaligned = [];
  for (const form of document.querySelectorAll("form")) {
    const controls = [...form.querySelectorAll("input:not([type=checkbox]):not([type=radio]):not([type=hidden]), select, button")]
      .filter((control) => visible(control) && !control.closest("dialog:not([open]), details:not([open])"))
      .map((control) => ({ control, box: control.getBoundingClientRect() }));
    for (let i = 0; i < controls.length; i++) {
      for (let j = i + 1; j < controls.length; j++) {
        const a = controls[i];
        const b = controls[j];
        const sideBySide = Math.min(a.box.bottom, b.box.bottom) - Math.max(a.box.top, b.box.top) > 2 && (a.box.right <= b.box.left + 1 || b.box.right <= a.box.left + 1);
        if (sideBySide && Math.abs(a.box.bottom - b.box.bottom) > 2) misaligned.push(describe(a.control) + " and " + describe(b.control) + " end " + Math.round(Math.abs(a.box.bottom - b.box.bottom)) + " px apart");
      }
    }
  }

  // A grid of equal columns: each cell as wide as its column. (A fieldset's grid does not resolve
  // its tracks: there, an even template means every cell as wide as the others.)
  const unequal = [];
  for (const grid of document.querySelectorAll("main *")) {
    const style = getComputedStyle(grid);
    if (style.display !== "grid" || !visible(grid)) continue;
    const template = style.gridTemplateColumns;
    const tracks = template.split(" ").map(parseFloat).filter((value) => value > 0);
    const evenRepeat = /^repeat\\((auto-fill|auto-fit|\\d+), (minmax\\([^,]+, 1fr\\)|1fr)\\)$/.test(template);
    const resolvedEven = tracks.length >= 2 && !tracks.some((track) => Math.abs(track - tracks[0]) > 0.5);
    if (!evenRepeat && !resolvedEven) continue;
    const cells = [...grid.children].filter((cell) => visible(cell) && cell.tagName !== "LEGEND" && !getComputedStyle(cell).gridColumnEnd.startsWith("span") && getComputedStyle(cell).position !== "absolute");
    if (cells.length < 2) continue;
    const column = resolvedEven ? tracks[0] : Math.max(...cells.map((cell) => cell.getBoundingClientRect().width));
    for (const cell of cells) {
      const width = cell.getBoundingClientRect().width;
      if (Math.abs(width - column) > 1) unequal.push(describe(cell) + " is " + Math.round(width) + " px in a " + Math.round(column) + " px column");
    }
  }

  // No bullet beside a card: a list of cards has no markers.
  const strayMarkers = [];
  for (const item of document.querySelectorAll("li")) {
    if (!visible(item) || !item.querySelector(":scope > article, :scope > .card")) continue;
    const style = getComputedStyle(item);
    if (style.display === "list-item" && style.listStyleType !== "none") strayMarkers.push(describe(item) + " has a " + style.listStyleType + " marker");
  }
  return {
    overflow,
    overlaps,
    smallText: [...new Set(smallText)].slice(0, 10),
    clipped: [...new Set(clipped)].slice(0, 10),
    highlights,
    misaligned: [...new Set(misaligned)].slice(0, 10),
    unequal: [...new Set(unequal)].slice(0, 10),
    strayMarkers: strayMarkers.slice(0, 5),
  };
})(${MIN_TEXT_PX})`;

/** What is wrong with the page's layout as it stands (each list empty when nothing is). */
export async function layoutProblems(page: Page): Promise<LayoutProblems> {
  return page.evaluate<LayoutProblems>(measure);
}

/**
 * Moves the pointer off every control (a hover highlight is not a layout defect) and checks the
 * page's layout, naming the page and width in any failure.
 */
export async function checkLayout(page: Page, name: string): Promise<void> {
  await page.mouse.move(0, page.viewportSize()?.height ?? 0);
  const width = page.viewportSize()?.width ?? 0;
  expect(await layoutProblems(page), `${name} at ${width} px`).toEqual({
    overflow: [],
    overlaps: [],
    smallText: [],
    clipped: [],
    highlights: [],
    misaligned: [],
    unequal: [],
    strayMarkers: [],
  });
}
