/// The review screen's style: dark, with neutral grey around photos (no tint to judge
/// colour against), one layout from a phone to a 4K studio screen.
enum WebPageStyle {
    static let css = #"""
:root { color-scheme: dark; --ok: #3ecf6e; --bad: #ff5d5d; --neutral: #262626; --ui: #1b1b1b; --line: #3a3a3a; --cell: 180px;
        --Red: #e5484d; --Yellow: #f5d90a; --Green: #30a46c; --Blue: #3e63dd; --Purple: #8e4ec6; }
* { box-sizing: border-box; }
html, body { height: 100%; }
body { margin: 0; font: 14px system-ui, sans-serif; background: #121212; color: #e6e6e6; display: flex; flex-direction: column; overflow: hidden; }
button, select, input { font: inherit; color: inherit; }
button { padding: .45em .9em; border-radius: .4em; border: 1px solid var(--line); background: #262626; cursor: pointer; touch-action: manipulation; }
button[aria-pressed="true"], nav button.on { background: #3d3d3d; border-color: #777; }
select, input[type=number] { background: #222; border: 1px solid var(--line); border-radius: .3em; padding: .2em; }
input[type=number] { width: 3.5em; }
header, #filters { display: flex; gap: .8em; align-items: center; padding: .4em .8em; background: var(--ui); flex-wrap: wrap; }
#filters { border-top: 1px solid #222; font-size: .9em; padding-top: .2em; padding-bottom: .3em; }
.grow { flex: 1; }
#mode.photo { color: var(--ok); }
main { flex: 1; position: relative; min-height: 0; background: var(--neutral); }
main > section { position: absolute; inset: 0; display: none; }
body[data-view="grid"] #grid, body[data-view="loupe"] #loupe, body[data-view="compare"] #compare { display: flex; }
#empty { position: absolute; inset: 0; display: flex; align-items: center; justify-content: center; color: #888; pointer-events: none; }
#empty[hidden] { display: none; }
#grid { overflow-y: auto; display: block; outline: none; scrollbar-gutter: stable; }
body[data-view="grid"] #grid { display: block; }
#grid-space { position: relative; }
.cell { position: absolute; padding: 4px; }
.cell .frame { width: 100%; height: 100%; background: #1c1c1c; border: 2px solid transparent; border-radius: 3px; display: flex; flex-direction: column; overflow: hidden; }
.cell.current .frame { border-color: #ddd; }
.cell.chosen .frame { border-color: #4a90d9; }
.cell .picture { flex: 1; min-height: 0; display: flex; align-items: center; justify-content: center; }
.cell img { max-width: 100%; max-height: 100%; object-fit: contain; }
.cell .meta { display: flex; gap: .4em; font-size: 12px; padding: 2px 4px; align-items: center; white-space: nowrap; overflow: hidden; }
.cell .meta .camera { color: #999; overflow: hidden; text-overflow: ellipsis; }
.cell.photoFailed .picture { color: var(--bad); font-size: 12px; padding: 6px; text-align: center; }
.cell.photoFailed .frame { border-color: #6b2a2a; }
.stars-shown { color: #f0c419; letter-spacing: -1px; }
.dot { display: inline-block; width: .8em; height: .8em; border-radius: 50%; flex: none; }
.cell .meta > span:not(.camera) { flex: none; }
.pick-picked { color: var(--ok); } .pick-rejected { color: var(--bad); }
.cell.rejected img { opacity: .35; }
#loupe { flex-direction: row; }
.viewport { position: relative; flex: 1; overflow: hidden; background: var(--neutral); touch-action: none; cursor: zoom-in; user-select: none; }
.viewport.zoomed { cursor: grab; }
.viewport .layer { position: absolute; left: 0; top: 0; transform-origin: 0 0; }
.viewport .layer img, .viewport .layer canvas { position: absolute; display: block; }
.viewport .tiles img { image-rendering: auto; }
.viewport.pixels .tiles img { image-rendering: pixelated; }
.viewport .caption { position: absolute; left: .5em; bottom: .4em; font-size: 12px; background: rgba(0,0,0,.55); padding: .1em .5em; border-radius: .3em; pointer-events: none; }
.viewport .failed { position: absolute; inset: 0; display: flex; align-items: center; justify-content: center; color: var(--bad); padding: 2em; text-align: center; }
#panel { width: 280px; background: var(--ui); padding: .6em; overflow-y: auto; display: flex; flex-direction: column; gap: .6em; }
#histogram { width: 100%; height: 110px; background: #0b0b0b; border-radius: 3px; }
.clip label { display: block; margin: .2em 0; }
#exposure { display: grid; grid-template-columns: auto 1fr; gap: .15em .6em; margin: 0; font-size: 13px; }
#exposure dt { color: #999; } #exposure dd { margin: 0; overflow-wrap: anywhere; }
.zoom { display: flex; gap: .3em; flex-wrap: wrap; }
#compare { display: none; gap: 2px; background: #111; flex-wrap: wrap; }
body[data-view="compare"] #compare { display: flex; }
#compare .viewport { flex: 1 1 45%; min-width: 40%; }
#compare .viewport.reference { outline: 2px solid #d9a44a; outline-offset: -2px; }
body[data-view="live"] #live-view { display: flex; }
body[data-view="live"] #marks, body[data-view="live"] #filters { display: none; }
#live-wall { flex: 1; display: grid; grid-template-columns: repeat(var(--live-columns, 1), 1fr); grid-auto-rows: 1fr; gap: 2px; background: #111; min-width: 0; }
.live-tile { position: relative; overflow: hidden; background: #000; min-height: 0; }
.live-tile canvas { position: absolute; inset: 0; width: 100%; height: 100%; object-fit: contain; cursor: crosshair; }
.live-tile.magnified canvas { image-rendering: pixelated; }
.live-tile .caption { position: absolute; left: .5em; top: .4em; font-size: 12px; background: rgba(0,0,0,.55); padding: .1em .5em; border-radius: .3em; pointer-events: none; }
.live-tile .lens { position: absolute; left: 50%; bottom: .5em; transform: translateX(-50%); display: flex; gap: .25em; }
.live-tile .lens[hidden], .live-tile .failed[hidden] { display: none; }
.live-tile .lens button { background: rgba(30,30,30,.8); padding: .35em .6em; }
.live-tile .failed { position: absolute; inset: 0; display: flex; align-items: center; justify-content: center; color: var(--bad); padding: 2em; text-align: center; background: rgba(0,0,0,.6); }
#live-panel { width: 280px; background: var(--ui); padding: .6em; overflow-y: auto; display: flex; flex-direction: column; gap: .5em; }
#live-panel fieldset { border: 1px solid var(--line); border-radius: .4em; display: flex; flex-direction: column; gap: .35em; }
#live-panel small, #ghost-name { color: #999; font-size: 12px; }
#settings-list details { margin: .3em 0; }
#settings-list .setting { display: grid; grid-template-columns: 1fr 8em; gap: .4em; align-items: center; margin: .2em 0; font-size: 13px; }
#settings-list .setting select, #settings-list .setting input:not([type=checkbox]) { width: 100%; }
#settings-state.photoFailed { color: var(--bad); }
#new-shot { position: absolute; top: .6em; left: 50%; transform: translateX(-50%); z-index: 5; background: #2d5a9a; border-color: #4a90d9; }
#marks { display: flex; gap: .4em; padding: .35em .8em; background: var(--ui); align-items: center; flex-wrap: wrap; border-top: 1px solid #222; }
#marks .stars button { padding: .35em .5em; color: #777; }
#marks .stars button.on { color: #f0c419; }
#marks .labels button { width: 1.9em; height: 1.9em; padding: 0; border-radius: 50%; }
#marks .labels button.on { outline: 2px solid #fff; }
#marks[hidden] { display: none; }
#state { padding: .2em .8em; min-height: 1.6em; font-size: .9em; background: var(--ui); }
#state.photoSuccess { color: var(--ok); } #state.photoFailed { color: var(--bad); }
footer { display: flex; gap: .6em; padding: .5em .8em; justify-content: center; align-items: center; background: var(--ui); }
#shutter { width: 4.6em; height: 4.6em; border-radius: 50%; background: #eee; color: #111; font-weight: bold; border: .3em solid #888; }
#shutter:disabled { opacity: .5; }
dialog { background: #1e1e1e; color: #eee; border: 1px solid #555; border-radius: .5em; max-width: 92vw; }
dialog td:first-child { padding-right: 1.2em; font-family: ui-monospace, monospace; white-space: nowrap; }
#share-code { width: min(280px, 70vw); image-rendering: pixelated; background: #fff; display: block; }
@media (max-width: 700px) {
  :root { --cell: 120px; }
  header { gap: .5em; font-size: 13px; }
  #filters { flex-wrap: nowrap; overflow-x: auto; }
  #filters label { flex: none; }
  #loupe { flex-direction: column; }
  #panel { width: auto; max-height: 30vh; flex-direction: row; flex-wrap: wrap; align-items: flex-start; gap: .4em; }
  #histogram { width: 44%; height: 72px; }
  .clip { flex: 1; font-size: 12px; }
  #exposure { font-size: 12px; flex: 1 1 100%; }
  .zoom button { padding: .3em .6em; }
  #compare .viewport { flex-basis: 100%; min-height: 45%; }
  #live-view { flex-direction: column; }
  #live-panel { width: auto; max-height: 35vh; }
  #marks button { padding: .5em .7em; }
}
@media (min-width: 2400px) { body { font-size: 17px; } :root { --cell: 260px; } #panel { width: 380px; } #histogram { height: 150px; } }
"""#
}
