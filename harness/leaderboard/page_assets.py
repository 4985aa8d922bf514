"""The fixed parts of `index.html` (`page.py` writes the rest): its inline style sheet, its script
(sorting blocks, the filter, the row buttons), the Content Security Policy that forbids every
network load, and the legend lines that only the page has."""

from __future__ import annotations

CSS = """
*{box-sizing:border-box}body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;
max-width:80em;padding:0 1em 2em;color:#222;line-height:1.35}
nav{position:sticky;top:0;background:#fff;padding:.5em 0;border-bottom:1px solid #ddd;z-index:1}
nav{display:flex;flex-wrap:wrap;gap:.2em .9em}
#filter{width:100%;max-width:30em;padding:.4em;font-size:1em;margin:.5em 0}
.wrap{overflow-x:auto;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;margin:.5em 0;font-variant-numeric:tabular-nums}
th,td{border:1px solid #ccc;padding:.2em .4em;text-align:right;vertical-align:top}
td.t,th.t{text-align:left}
td.t{overflow-wrap:anywhere;min-width:6em}td.m{max-width:22em}td.team{max-width:13em}
td.n{white-space:nowrap}
.ci{display:block;font-size:.78em;color:#666;white-space:nowrap}
th{background:#f4f4f4}thead th.t,th .k{white-space:nowrap}
thead th{cursor:pointer;user-select:none}thead th.nosort{cursor:default}
th[aria-sort=ascending]::after{content:" \\25B2"}th[aria-sort=descending]::after{content:" \\25BC"}
td.best{font-weight:bold;background:#eef7ee}
tr.floor td{color:#555}td.floorwins{background:#fdf1e1;text-decoration:underline dotted}
p.floor-note{font-size:.92em;color:#444;max-width:60em}
tr.reported{background:#fff8e6;font-style:italic}
tr.seed td{background:#f8f8fb;font-size:.92em}tr.seed td.m{padding-left:1.4em}
button.toggle{font:inherit;font-size:.85em;padding:0 .35em;margin-right:.3em;cursor:pointer}
table.groups{font-size:.9em;margin:.2em 0}
small.src{display:block;color:#555;font-style:normal}
figure.plot{margin:1em 0}svg.plot{max-width:100%;height:auto;display:block}
.plotwrap{overflow-x:auto;-webkit-overflow-scrolling:touch}
figure.plot figcaption{font-size:.92em;color:#444;max-width:75em}
dl.legend dt{font-weight:bold;float:left;clear:left;min-width:4em}dl.legend dd{margin-left:5em}
@media (max-width:40em){body{padding:0 .4em}svg.plot{max-width:none;width:900px}th,td{padding:.2em .3em;font-size:.85em}dl.legend dd{margin-left:0}
dl.legend dt{float:none}}
"""

SCRIPT = """
(function(){
function key(td){return td?td.getAttribute('data-v'):'';}
function blocks(body){
  var out=[];
  Array.prototype.forEach.call(body.rows,function(r){
    if(r.classList.contains('sub')&&out.length){out[out.length-1].push(r);}else{out.push([r]);}
  });
  return out;
}
function expanded(id){
  var b=document.querySelector('button[aria-controls~="'+id+'"]');
  return !!b&&b.getAttribute('aria-expanded')==='true';
}
var query=null;
function matcher(text){
  var q=text.trim().toLowerCase().replace(/\\s+/g,' ');
  if(!q){return null;}
  var pattern=q.replace(/[.*+?^${}()|[\\]\\\\]/g,'\\\\$&').replace(/ /g,'\\\\s+');
  var head=/^[a-z0-9]/.test(q)?'(?:^|[^a-z0-9])':'';
  var tail=/[0-9]$/.test(q)?'(?![0-9])':'';
  return new RegExp(head+pattern+tail);
}
function hit(row){return !query||query.test(row.getAttribute('data-text')||'');}
function refresh(){
  document.querySelectorAll('table.board').forEach(function(table){
    blocks(table.tBodies[0]).forEach(function(block){
      var main=block[0],seeds=block.filter(function(r){return r.classList.contains('seed');});
      var mainHit=hit(main),seedHits=seeds.filter(hit);
      var show=mainHit||seedHits.length>0;
      main.hidden=!show;
      var open=expanded(main.id+'-seeds');
      // a phrase that names the method shows its seeds as the button left them; one that names
      // only some seeds ("seed 0") shows those seeds
      seeds.forEach(function(r){
        r.hidden=!show||((!query||mainHit)?!open:seedHits.indexOf(r)<0);
      });
      block.slice(1).forEach(function(r){
        if(r.classList.contains('groups')){
          var owner=document.getElementById(r.getAttribute('data-owner'));
          r.hidden=!owner||owner.hidden||!expanded(r.id);
        }
      });
    });
  });
}
document.querySelectorAll('button.toggle').forEach(function(b){
  b.addEventListener('click',function(){
    b.setAttribute('aria-expanded',b.getAttribute('aria-expanded')==='true'?'false':'true');
    refresh();
  });
});
document.querySelectorAll('table.board').forEach(function(table){
  var heads=table.querySelectorAll('thead th');
  heads.forEach(function(th,col){
    var type=th.getAttribute('data-type');
    if(type!=='num'&&type!=='text'){return;}
    th.tabIndex=0;
    var go=function(){
      var current=th.getAttribute('aria-sort');
      var first=th.getAttribute('data-first')||'ascending';
      var order=current?(current==='ascending'?'descending':'ascending'):first;
      var dir=order==='ascending'?1:-1;
      heads.forEach(function(h){h.removeAttribute('aria-sort');});
      th.setAttribute('aria-sort',order);
      var body=table.tBodies[0];
      var list=blocks(body);
      list.sort(function(a,b){
        var x=key(a[0].cells[col]),y=key(b[0].cells[col]);
        if(type==='num'){
          var ex=(x===''),ey=(y==='');
          if(ex||ey){return ex===ey?0:(ex?1:-1);}
          return dir*(parseFloat(x)-parseFloat(y));
        }
        return dir*x.localeCompare(y);
      });
      list.forEach(function(block){block.forEach(function(r){body.appendChild(r);});});
    };
    th.addEventListener('click',go);
    th.addEventListener('keydown',function(e){if(e.key==='Enter'){go();}});
  });
});
var box=document.getElementById('filter');
box.addEventListener('input',function(){query=matcher(box.value);refresh();});
refresh();
})();
"""

PAGE_LEGEND = [
    ("seeds", "runs of one method that differ only in their seed are one row, ranked as one method: the "
              "mean of the seeds with its two-level interval (the lowest and highest seed in the cell's "
              "tooltip); the button lists each seed with its own interval. leaderboard.csv and "
              "leaderboard.json list every seed, and the rows as shown."),
    ("bold", "the best value of a column among the contenders' rows (not reported rows, not a chance floor); "
             "a floor's cell above every contender is shaded, and the note under the table says why."),
    ("filter", "matches the typed phrase in names, teams, sources and paths (a number at its end matches "
               "whole: \"seed 1\" is not \"seed 10\"); the first click on a metric sorts best first."),
]

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'"
