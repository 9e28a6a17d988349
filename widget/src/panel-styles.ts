/** The panel's styles (styles.ts says why constructed sheets and px). Full screen up to 480 px wide. */
import { font } from "./styles.ts";

export const panelCss = `
.panel{position:fixed;bottom:84px;right:20px;width:380px;max-width:calc(100vw - 40px);height:600px;
max-height:calc(100vh - 120px);display:flex;flex-direction:column;box-sizing:border-box;background:#fff;
color:#111;border-radius:16px;box-shadow:0 12px 40px rgba(0,0,0,.28);overflow:hidden;font:${font};text-align:left}
.panel[hidden]{display:none}
:host(.left) .panel{left:20px;right:auto}
:host(.preview) .panel{position:absolute;bottom:64px;right:0;max-height:none;height:520px}
:host(.preview.left) .panel{left:0}
*,*::before,*::after{box-sizing:border-box}
header{display:flex;align-items:center;gap:8px;padding:10px 8px 10px 16px;background:var(--cbw-accent);
color:var(--cbw-on-accent)}
h2{margin:0;flex:1;font-size:16px;font-weight:600;line-height:1.3;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
button{font:inherit;color:inherit}
.icon{all:unset;display:grid;place-items:center;width:40px;height:40px;border-radius:20px;cursor:pointer}
.icon svg{fill:currentColor}
.icon svg.stroke{fill:none;stroke:currentColor;stroke-width:2;stroke-linecap:round;stroke-linejoin:round}
.icon:disabled{opacity:.5;cursor:default}
.status{margin:0;padding:8px 16px;background:#fff4d6;color:#4d3800;font-size:13px;border-bottom:1px solid #efdca8}
.log{flex:1;overflow-y:auto;padding:16px;display:flex;flex-direction:column;gap:8px}
.msg{max-width:85%;margin:0;padding:8px 12px;border-radius:14px;white-space:pre-wrap;overflow-wrap:anywhere}
.user{align-self:flex-end;background:var(--cbw-accent);color:var(--cbw-on-accent);border-bottom-right-radius:4px}
.assistant,.agent{align-self:flex-start;background:#eef0f3;color:#111;border-bottom-left-radius:4px}
.who{display:block;font-size:12px;font-weight:600;color:#3d4248}
.note{align-self:center;margin:0;font-size:12px;color:#4a4f55;text-align:center}
.thumbs{display:flex;flex-wrap:wrap;gap:6px;margin-top:6px}
.thumbs canvas{width:64px;height:64px;border-radius:8px;background:#fff}
.chip{display:inline-block;margin-top:4px;padding:2px 8px;border-radius:10px;background:rgba(0,0,0,.08);font-size:12px}
.sources{margin:6px 0 0;padding:0;list-style:none;font-size:12px}
.sources a{color:#0b4fb3}
.typing{align-self:flex-start;display:flex;gap:4px;padding:12px 14px;background:#eef0f3;border-radius:14px}
.typing i{width:6px;height:6px;border-radius:3px;background:#4a4f55;animation:cbw-dot 1.2s infinite}
.typing i:nth-child(2){animation-delay:.2s}
.typing i:nth-child(3){animation-delay:.4s}
@keyframes cbw-dot{0%,80%,100%{opacity:.25}40%{opacity:1}}
@media (prefers-reduced-motion:reduce){.typing i{animation:none}}
.starters{display:flex;flex-wrap:wrap;gap:8px;margin:0;padding:0 16px 12px;list-style:none}
.starters button{all:unset;cursor:pointer;padding:6px 12px;border:1px solid #8a9099;border-radius:16px;font-size:13px;color:#111}
.error{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin:0 16px 8px;padding:8px 12px;
background:#fdecea;color:#6e1a10;border-radius:8px;font-size:13px}
.error[hidden],.status[hidden],.starters[hidden],.typing[hidden]{display:none}
.error button{all:unset;cursor:pointer;text-decoration:underline;font-weight:600}
form{display:flex;flex-wrap:wrap;align-items:flex-end;gap:4px;margin:0;padding:8px;border-top:1px solid #dfe2e6}
.pending{display:flex;flex-wrap:wrap;gap:6px;width:100%}
.pending:empty{display:none}
.pending button{all:unset;position:relative;cursor:pointer;border-radius:8px}
.pending canvas{width:48px;height:48px;border-radius:8px;display:block}
textarea{flex:1;min-width:0;min-height:40px;max-height:120px;margin:0;padding:9px 12px;border:1px solid #8a9099;
border-radius:12px;background:#fff;color:#111;font:${font};resize:none;overflow-y:auto}
.send{background:var(--cbw-accent);color:var(--cbw-on-accent)}
:focus-visible{outline:3px solid #0b4fb3;outline-offset:2px}
.sr{position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
@media (max-width:480px){.panel{top:0;right:0;bottom:0;left:0;width:auto;max-width:none;height:auto;max-height:none;border-radius:0}
:host(.left) .panel{left:0}}
`;
