/**
 * The launcher's styles, adopted by the shadow root as a constructed style sheet: CSP's
 * `style-src` governs `<style>` elements and `style` attributes, not constructed sheets, so the
 * widget needs no `'unsafe-inline'`. Every size is in px, so the host page's root font size
 * changes nothing, and `:host` resets what the page could make the host element inherit or be
 * (its `!important` declarations win over the page's own: a shadow tree's important rules come last).
 */

export const font = `14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif`;

export const launcherCss = `
:host{all:initial!important;display:block!important;position:fixed!important;z-index:2147483000!important;
top:auto!important;bottom:20px!important;right:20px!important;left:auto!important;width:auto!important;
height:auto!important;margin:0!important;padding:0!important;border:0!important;transform:none!important;
opacity:1!important;visibility:visible!important;font:${font}!important;color:#111!important}
:host(.left){left:20px!important;right:auto!important}
:host(.preview){position:absolute!important;z-index:1!important}
.launcher{all:unset;box-sizing:border-box;display:inline-flex;align-items:center;gap:8px;height:48px;
padding:0 20px 0 16px;border-radius:24px;background:var(--cbw-accent);color:var(--cbw-on-accent);
font:600 15px/1 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;cursor:pointer;
box-shadow:0 4px 14px rgba(0,0,0,.25)}
.launcher svg{fill:currentColor}
.launcher:focus-visible{outline:3px solid #111;box-shadow:0 0 0 6px #fff}
`;

/** Adopts `css` into `root` (older browsers without constructed sheets get a `<style>` element). */
export function adopt(root: ShadowRoot, css: string): void {
  try {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(css);
    root.adoptedStyleSheets = [...root.adoptedStyleSheets, sheet];
  } catch {
    const style = document.createElement("style");
    style.textContent = css;
    root.append(style);
  }
}
