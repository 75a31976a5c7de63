/** The static review page's stylesheet: light and dark via prefers-color-scheme, print shows every board. */
export const REVIEW_CSS = String.raw`
:root{color-scheme:light dark;
  --bg:#ffffff;--fg:#1f2328;--muted:#59636e;--border:#d1d9e0;--panel:#f6f8fa;--code-bg:#f6f8fa;--selected:#ddf4ff;
  --accent:#0969da;--add-bg:#dafbe1;--add-mk:#1a7f37;--del-bg:#ffebe9;--del-mk:#cf222e;
  --blocker:#a40e26;--major:#bc4c00;--minor:#9a6700;--nit:#59636e;
  --note:#0969da;--warning:#9a6700;--question:#8250df;--remedy:#1a7f37;
  --settled:#1a7f37;--absent:#59636e;--failed:#cf222e;
  --mono:ui-monospace,SFMono-Regular,"SF Mono",Menlo,Consolas,"Liberation Mono","DejaVu Sans Mono",monospace;
  --sans:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Liberation Sans","DejaVu Sans",sans-serif}
@media (prefers-color-scheme:dark){:root{
  --bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--border:#3d444d;--panel:#151b23;--code-bg:#151b23;--selected:#12263f;
  --accent:#4493f8;--add-bg:rgba(46,160,67,.18);--add-mk:#3fb950;--del-bg:rgba(248,81,73,.18);--del-mk:#f85149;
  --blocker:#ff7b72;--major:#f0883e;--minor:#d29922;--nit:#9198a1;
  --note:#4493f8;--warning:#d29922;--question:#ab7df8;--remedy:#3fb950;
  --settled:#3fb950;--absent:#9198a1;--failed:#f85149}}
*{box-sizing:border-box}
html{background:var(--bg);color:var(--fg)}
body{margin:0;font:15px/1.55 var(--sans);background:var(--bg);color:var(--fg)}
a{color:var(--accent)}
code,pre,kbd{font-family:var(--mono);font-size:.88em}
:not(pre)>code{background:var(--code-bg);border:1px solid var(--border);border-radius:4px;padding:0 .25em;overflow-wrap:anywhere}
pre{background:var(--code-bg);border:1px solid var(--border);border-radius:6px;padding:.6em .8em;overflow-x:auto}
pre code{background:none;border:0;padding:0}
.muted{color:var(--muted)}
.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.scroll{overflow-x:auto}
.page-header{padding:1.25rem 2rem 1rem;border-bottom:1px solid var(--border);background:var(--panel)}
.brand{margin:0;font-size:.8rem;letter-spacing:.08em;text-transform:uppercase;color:var(--muted);font-weight:600}
.page-header h1{margin:.2rem 0 .6rem;font-size:1.5rem;line-height:1.25}
.ids{display:flex;flex-wrap:wrap;gap:.3rem 1.75rem;margin:0;font-size:.88rem}
.ids div{display:flex;gap:.45rem;align-items:baseline}
.ids dt{color:var(--muted);font-weight:600}
.ids dd{margin:0}
.review{display:grid;grid-template-columns:minmax(13rem,17rem) minmax(0,1fr);gap:0;align-items:start}
.tab{position:absolute;opacity:0;width:1px;height:1px;margin:0;pointer-events:none}
.rail{position:sticky;top:0;padding:1rem .75rem;border-right:1px solid var(--border);min-height:calc(100vh - 9rem);display:flex;flex-direction:column;gap:.4rem}
.rail-heading{margin:0 .25rem .25rem;font-size:.75rem;letter-spacing:.08em;text-transform:uppercase;color:var(--muted);font-weight:600}
.rail-item{display:block;padding:.5rem .65rem;border:1px solid transparent;border-left:4px solid var(--border);border-radius:6px;cursor:pointer}
.rail-item:hover{background:var(--panel)}
.rail-item.state-settled{border-left-color:var(--settled)}
.rail-item.state-absent{border-left-color:var(--absent)}
.rail-item.state-failed{border-left-color:var(--failed)}
.rail-title{font-weight:600}
.rail-detail{display:-webkit-box;-webkit-box-orient:vertical;-webkit-line-clamp:3;line-clamp:3;overflow:hidden;font-size:.8rem;color:var(--muted);margin-top:.15rem;overflow-wrap:anywhere}
.state-badge{display:inline-block;font-size:.72rem;font-weight:600;padding:0 .4em;border-radius:999px;border:1px solid currentColor;vertical-align:.1em}
.state-badge.state-settled{color:var(--settled)}
.state-badge.state-absent{color:var(--absent)}
.state-badge.state-failed{color:var(--failed)}
.boards{padding:1rem 2rem 3rem;min-width:0}
.board{display:none;max-width:60rem}
.board-lens{margin:.25rem 0 0;font-size:.8rem;letter-spacing:.08em;text-transform:uppercase;color:var(--muted);font-weight:600}
.board>h2{font-size:1.6rem;margin:.2rem 0 .5rem;line-height:1.25}
.intro{font-size:1.05rem;border-bottom:1px solid var(--border);padding-bottom:.5rem;margin-bottom:1rem}
h3{font-size:1.25rem;margin:1.75rem 0 .5rem;padding-bottom:.2rem;border-bottom:1px solid var(--border)}
h4{font-size:1.08rem;margin:1.25rem 0 .4rem}
h5,h6{font-size:.98rem;margin:1rem 0 .3rem}
h5.sub,h6.sub{color:var(--muted)}
.el{margin:.75rem 0}
.section>.section{margin-left:0}
article.el{border:1px solid var(--border);border-radius:8px;padding:.25rem 1rem .75rem;background:var(--bg)}
article.el>h3,article.el>h4,article.el>h5,article.el>h6{border-bottom:0;margin-top:.75rem}
.finding{border-left:4px solid var(--border)!important}
.finding.sev-blocker{border-left-color:var(--blocker)!important}
.finding.sev-major{border-left-color:var(--major)!important}
.finding.sev-minor{border-left-color:var(--minor)!important}
.finding.sev-nit{border-left-color:var(--nit)!important}
.badge{display:inline-block;font:600 .72rem/1.5 var(--sans);padding:0 .45em;border-radius:4px;border:1px solid var(--border);background:var(--panel);color:var(--muted);vertical-align:.15em;text-transform:lowercase}
.badge.sev{color:#fff;border-color:transparent;text-transform:uppercase;letter-spacing:.03em}
.badge.sev-blocker{background:var(--blocker)}.badge.sev-major{background:var(--major)}.badge.sev-minor{background:var(--minor)}.badge.sev-nit{background:var(--nit)}
@media (prefers-color-scheme:dark){.badge.sev{color:#0d1117}}
.badge.inferred{color:var(--question);border-color:var(--question);text-transform:none}
.meta{margin:.1rem 0 .5rem;font-size:.85rem}
.field-label{font-size:.72rem;font-weight:700;letter-spacing:.06em;text-transform:uppercase;color:var(--muted);margin-right:.35em}
.statement{font-size:1.05rem;font-weight:600;margin:.3rem 0}
.sources{font-size:.85rem;color:var(--muted)}
.step>h3,.step>h4,.step>h5,.step>h6{display:flex;gap:.6rem;align-items:baseline}
.step-no{display:inline-flex;justify-content:center;align-items:center;min-width:1.7rem;height:1.7rem;border-radius:999px;background:var(--accent);color:var(--bg);font-size:.9rem;flex:none}
.callout{border:1px solid var(--border);border-left:4px solid var(--note);border-radius:6px;padding:.2rem .9rem;margin:.75rem 0;background:var(--panel)}
.callout-label{margin:.4rem 0 0;font-size:.72rem;font-weight:700;letter-spacing:.06em;text-transform:uppercase;color:var(--note)}
.callout.tone-warning{border-left-color:var(--warning)}.callout.tone-warning .callout-label{color:var(--warning)}
.callout.tone-question{border-left-color:var(--question)}.callout.tone-question .callout-label{color:var(--question)}
.callout.tone-remedy{border-left-color:var(--remedy)}.callout.tone-remedy .callout-label{color:var(--remedy)}
blockquote{margin:.5rem 0;padding:.1rem .9rem;border-left:4px solid var(--border);color:var(--fg)}
blockquote.shall{font-style:italic;background:var(--panel);border-radius:0 6px 6px 0;padding:.5rem .9rem}
.scenario{margin:.6rem 0;padding:.1rem 0 .1rem .9rem;border-left:2px dashed var(--border)}
.scenario-name{margin:.2rem 0}
.when-then{display:grid;grid-template-columns:max-content 1fr;gap:.2rem .8rem;margin:.2rem 0}
.when-then dt{font:700 .75rem/1.9 var(--mono);color:var(--accent)}
.when-then dd{margin:0}
.tasks{list-style:none;padding-left:0}
.task{display:flex;gap:.5rem;align-items:baseline;margin:.25rem 0}
.check{display:inline-flex;justify-content:center;align-items:center;width:1.05rem;height:1.05rem;border:1.5px solid var(--muted);border-radius:3px;font-size:.8rem;line-height:1;flex:none;transform:translateY(.15em)}
.task.done .check{background:var(--settled);border-color:var(--settled);color:var(--bg)}
.task.done>span:nth-child(2){color:var(--muted)}
.src{font-size:.78em}
.stats{display:flex;flex-wrap:wrap;gap:.6rem}
.stat{border:1px solid var(--border);border-radius:8px;padding:.4rem .9rem;min-width:8rem;background:var(--panel)}
.stat dt{font-size:.78rem;color:var(--muted)}
.stat dd{margin:0;font-size:1.35rem;font-weight:600}
.count{font-size:.8rem;font-weight:400;color:var(--muted);margin-left:.4rem}
.reason{margin:.2rem 0 .5rem}
.regions{list-style:none;padding-left:0;margin:.3rem 0}
.regions li{margin:.2rem 0}
.regions summary{cursor:pointer}
.lane-status{border:1px solid var(--border);border-left:4px solid var(--absent);border-radius:6px;padding:.25rem 1rem;margin:1rem 0;background:var(--panel)}
.lane-status.failed{border-left-color:var(--failed)}
.lane-status-head{font-weight:600}
.failure-message{white-space:pre-wrap;overflow-wrap:anywhere}
.cards{display:flex;flex-direction:column;gap:.5rem;margin:.6rem 0}
.code-card{margin:.5rem 0;border:1px solid var(--border);border-radius:6px;overflow:hidden;background:var(--code-bg)}
.code-card figcaption{padding:.3rem .7rem;font-size:.82rem;border-bottom:1px solid var(--border);display:flex;flex-wrap:wrap;gap:.5rem;align-items:baseline;background:var(--panel)}
.code-card figcaption .path{font-weight:600;background:none;border:0;padding:0}
.code-card .range{color:var(--muted)}
.code-card .label{margin-left:auto;color:var(--muted);font-style:italic}
.diff{border-collapse:collapse;width:100%;font:12.5px/1.5 var(--mono)}
.diff td{padding:0 .5rem;vertical-align:top}
.diff .ln{width:1%;min-width:2.8rem;text-align:right;color:var(--muted);user-select:none;white-space:nowrap;padding:0 .4rem}
.diff .mk{width:1%;user-select:none;padding:0 .2rem;text-align:center}
.diff .tx{white-space:pre;tab-size:4}
.diff tr.add{background:var(--add-bg)}.diff tr.add .mk{color:var(--add-mk)}
.diff tr.del{background:var(--del-bg)}.diff tr.del .mk{color:var(--del-mk)}
.diff tr.gap td{color:var(--muted);text-align:left}
.eof{color:var(--del-mk);margin-left:.25rem}
.code-missing,.code-more{padding:.3rem .7rem;margin:0;font-size:.85rem;color:var(--muted)}
.md-image{color:var(--muted);font-style:italic}
.page-footer{border-top:1px solid var(--border);padding:1rem 2rem 2rem;font-size:.85rem}
.page-footer summary{cursor:pointer;font-weight:600;margin:.4rem 0}
table.data{border-collapse:collapse;font-size:.82rem}
table.data th,table.data td{border-bottom:1px solid var(--border);padding:.25rem .6rem;text-align:left;white-space:nowrap}
table.data .num{text-align:right}
.prose p:first-child{margin-top:.3rem}
.callout-label+*{margin-top:.15rem}
.callout>:last-child{margin-bottom:.6rem}
@media (max-width:52rem){
  .review{grid-template-columns:1fr}
  .rail{position:static;min-height:0;border-right:0;border-bottom:1px solid var(--border);flex-direction:row;flex-wrap:wrap}
  .rail-heading{width:100%}
  .rail-item{flex:1 1 12rem}
  .boards,.page-header,.page-footer{padding-left:1rem;padding-right:1rem}
}
@media print{
  .rail,.tab{display:none}
  .review{display:block}
  .board{display:block!important;page-break-before:always}
  .board:first-of-type{page-break-before:auto}
  details{display:block}
}
`;
