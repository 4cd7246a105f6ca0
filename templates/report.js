// mpiflow report: interactive parts. Trace-derived strings are only ever
// inserted with textContent or as SVG attribute values, never as HTML.
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("mpiflow-data").textContent);
  var SVGNS = "http://www.w3.org/2000/svg";
  function $(id) { return document.getElementById(id); }
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function sel(tag, attrs) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    return e;
  }
  // fmtG formats like Go's %.<p>g, so that labels redrawn here read like
  // the ones Go wrote.
  function fmtG(v, p) {
    if (v === 0) return "0";
    var e = Math.floor(Math.log10(Math.abs(v)));
    if (e < -4 || e >= p) {
      var m = /^(-?[\d.]+)e([+-])(\d+)$/.exec(v.toExponential(p - 1));
      var mant = m[1].indexOf(".") >= 0 ? m[1].replace(/\.?0+$/, "") : m[1];
      return mant + "e" + m[2] + (m[3].length < 2 ? "0" : "") + m[3];
    }
    return String(parseFloat(v.toPrecision(p)));
  }
  function fmtS(s) {
    if (s === null || s === undefined || isNaN(s)) return "n/a";
    if (s === 0) return "0";
    if (Math.abs(s) >= 1) return s.toFixed(2);
    return fmtG(s, 3); // as units.Seconds
  }
  function fmtC(c) { return c === Math.round(c) || c >= 100 ? c.toFixed(0) : c.toFixed(1); }
  function fmtV(m, v) {
    if (v === null || v === undefined) return "n/a";
    if (m === "time") return fmtS(v) + " s";
    if (m === "bytes") return fmtB(v);
    if (m === "count") return fmtC(v);
    return fmtG(v, 3);
  }
  // fmtB formats bytes as the tables and the graphs' labels do (the Go
  // side's units.Bytes): "512 B", "85.9 KiB".
  function fmtB(b) {
    if (b < 1024) return b.toFixed(0) + " B";
    var e = 0;
    for (var v = b / 1024; v >= 1024 && e < 5; v /= 1024) e++;
    return (b / Math.pow(1024, e + 1)).toFixed(1) + " " + "KMGTPE"[e] + "iB";
  }
  var STOPS = [[255, 255, 178], [254, 204, 92], [253, 141, 60], [240, 59, 32], [189, 0, 38]];
  function heat(f) {
    if (f === null || isNaN(f)) return "#ffffff";
    f = Math.max(0, Math.min(1, f));
    var x = f * (STOPS.length - 1), i = Math.min(Math.floor(x), STOPS.length - 2), t = x - i;
    var a = STOPS[i], b = STOPS[i + 1];
    return rgb(a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t);
  }
  // dark reports whether text on color c ("rgb(r,g,b)" or "#rrggbb")
  // should be white, by its perceived luminance.
  function dark(c) {
    var v = rgbOf(c);
    return v !== null && luminance(v) < 140;
  }
  // rgbOf parses "rgb(r,g,b)" or "#rrggbb", null if neither.
  function rgbOf(c) {
    var m = /^rgb\((\d+),(\d+),(\d+)\)$/.exec(c);
    if (m) return [+m[1], +m[2], +m[3]];
    if (/^#[0-9a-f]{6}$/i.test(c)) return [1, 3, 5].map(function (i) { return parseInt(c.substr(i, 2), 16); });
    return null;
  }
  function luminance(v) { return 0.299 * v[0] + 0.587 * v[1] + 0.114 * v[2]; }
  // edgeColor is report/colors.go's EdgeColor: a color too light to see
  // as a line on white is mixed with grey.
  function edgeColor(c) {
    var v = rgbOf(c);
    if (v === null || luminance(v) <= 200) return c;
    return rgb(0.55 * v[0] + 0.45 * 128, 0.55 * v[1] + 0.45 * 128, 0.55 * v[2] + 0.45 * 128);
  }
  function rgb(r, g, b) {
    return "rgb(" + Math.round(r) + "," + Math.round(g) + "," + Math.round(b) + ")";
  }
  function diverge(f) { // -1 blue .. 0 white .. 1 red
    f = Math.max(-1, Math.min(1, f || 0));
    var w = [247, 247, 247], c = f > 0 ? [178, 24, 43] : [33, 102, 172], t = Math.abs(f);
    return rgb(w[0] + (c[0] - w[0]) * t, w[1] + (c[1] - w[1]) * t, w[2] + (c[2] - w[2]) * t);
  }
  // formatRanks writes ascending rank numbers as "0-3,8,10-11".
  function formatRanks(rs) {
    var out = [];
    rs = rs.filter(function (r, k) { return k === 0 || r !== rs[k - 1]; });
    for (var k = 0; k < rs.length;) {
      var j = k;
      while (j + 1 < rs.length && rs[j + 1] === rs[j] + 1) j++;
      out.push(j > k ? rs[k] + "-" + rs[j] : String(rs[k]));
      k = j + 1;
    }
    return out.join(",");
  }
  function parseRanks(s, n) {
    var out = [];
    s.split(",").forEach(function (part) {
      part = part.trim();
      if (!part) return;
      var m = part.split("-"), a = parseInt(m[0], 10), b = m.length > 1 ? parseInt(m[1], 10) : a;
      if (isNaN(a) || isNaN(b)) return;
      for (var i = a; i <= b && out.length < 10000; i++) out.push(i);
    });
    return out;
  }

  // ---- navigation: highlight the section in view
  var navLinks = document.querySelectorAll("nav#nav a");
  window.addEventListener("scroll", function () {
    var cur = null;
    document.querySelectorAll("main > section").forEach(function (s) {
      if (s.getBoundingClientRect().top < 120) cur = s.id;
    });
    navLinks.forEach(function (a) { a.classList.toggle("active", a.getAttribute("href") === "#" + cur); });
  }, { passive: true });

  // ---- event flow graphs
  function shapes(g) { return g.querySelectorAll("polygon, path, ellipse, polyline"); }
  // MPI_Init nodes are grey and outside the scale: their start-up cost
  // would otherwise leave every other node at the yellow end.
  var startUp = {};
  (D.startup || []).forEach(function (k) { startUp[k] = true; });
  function elemKey(e) { var m = /^x\d+_(\d+)$/.exec(e.id); return m ? +m[1] : -1; }
  // recolor sets node fills and edge strokes of svg (group g, level l) by
  // value(key) and returns the maxima used: fixed for nodes and edges
  // when given (> 0), else the level's own.
  function recolor(svg, g, value, colorOf, fixed) {
    var nodes = svg.querySelectorAll("g.node"), edges = svg.querySelectorAll("g.edge"), key = elemKey;
    var nmax = 0, emax = 0;
    nodes.forEach(function (n) { var v = value(key(n)); if (v !== null && !startUp[key(n)] && Math.abs(v) > nmax) nmax = Math.abs(v); });
    edges.forEach(function (n) { var v = value(key(n)); if (v !== null && Math.abs(v) > emax) emax = Math.abs(v); });
    if (fixed > 0) { nmax = fixed; emax = fixed; }
    nodes.forEach(function (n) {
      var c = startUp[key(n)] ? "#e4e4e4" : colorOf(value(key(n)), nmax);
      shapes(n).forEach(function (s) { if (s.getAttribute("fill") !== "none" && s.tagName !== "polyline") s.setAttribute("fill", c); });
      // Labels stay readable on the dark end of the scales.
      var txt = dark(c) ? "#ffffff" : "#000000";
      n.querySelectorAll("text").forEach(function (t) { t.setAttribute("fill", txt); });
    });
    edges.forEach(function (n) {
      var c = colorOf(value(key(n)), emax);
      c = c === "#ffffff" ? "#555555" : edgeColor(c);
      shapes(n).forEach(function (s) {
        s.setAttribute("stroke", c);
        if (s.tagName === "polygon") s.setAttribute("fill", c);
      });
    });
    return [nmax, emax];
  }
  var MI = { time: D.metrics.indexOf("time"), count: D.metrics.indexOf("count"), bytes: D.metrics.indexOf("bytes") };
  // relabel rewrites the labels and hover texts of a group's drawing with
  // the values of one rank (vals: element key -> value per metric), in the
  // formats of the paper: "MPI_Allreduce 8B cs=68 t=31.69", "200 (0.01)".
  function relabel(svg, vals) {
    svg.querySelectorAll("g.node, g.edge").forEach(function (n) {
      var v = vals[elemKey(n)];
      // A group's drawing is its representative's: what this rank lacks
      // is faded and keeps the group's mean label.
      n.classList.toggle("absent", !v && elemKey(n) >= 0);
      if (!v) return;
      var t = v[MI.time], c = v[MI.count], b = v[MI.bytes], texts = n.querySelectorAll("text");
      if (n.classList.contains("edge")) {
        if (texts.length) texts[0].textContent = fmtC(c) + " (" + fmtS(t) + ")";
      } else if (texts.length >= 2 && /^Loop /.test(texts[0].textContent)) {
        texts[1].textContent = fmtC(c) + " it t=" + fmtS(t);
      } else if (texts.length) {
        // "MPI_Irecv 85.9 KiB cs=53 t=0.12": the size is a number and a unit.
        var m = /^(.*?) (-?[\d.]+ (?:[KMGTPE]i)?B)( cs=\d+)? t=\S+$/.exec(texts[0].textContent);
        if (m) texts[0].textContent = m[1] + " " + fmtB(c > 0 ? b / c : 0) + (m[3] || "") + " t=" + fmtS(t);
      }
      var title = n.querySelector("title");
      if (title) {
        var lines = [title.textContent.split("\n")[0]];
        D.metrics.forEach(function (name, k) { if (v[k] !== null) lines.push(name + ": " + fmtV(name, v[k])); });
        title.textContent = lines.join("\n");
      }
    });
  }
  // rankMax is the largest absolute value of metric m over every element
  // of a rank (vals), MPI_Init left out: the red end of a rank-wide scale.
  function rankMax(vals, m) {
    var mx = 0;
    for (var k in vals) {
      var v = vals[k][m];
      if (v !== null && !startUp[k] && Math.abs(v) > mx) mx = Math.abs(v);
    }
    return mx;
  }
  var gRank = $("g-rank"), gMetric = $("g-metric"), gScale = $("g-scale"), gState = { rank: 0, group: -1, loop: 0 };
  D.ranks.forEach(function (r, i) {
    gRank.appendChild(el("option", { value: i }, r.label + (r.host ? " (" + r.host + ")" : "") + " \u00b7 group " + (r.group + 1)));
  });
  function showLevel(g, loop) {
    document.querySelectorAll("#g-levels .level").forEach(function (d) { d.hidden = true; });
    var d = $("lv-" + g + "-" + loop);
    if (!d) return;
    d.hidden = false;
    gState.group = g; gState.loop = loop;
    var grp = D.groups[g];
    $("g-group").textContent = D.ranks[gState.rank].label + " \u00b7 group " + (g + 1) + ": " + grp.members.length +
      (grp.structures > 1 ? " rank(s) of " + grp.structures + " similar structures, drawn as " + D.ranks[grp.rep].label + "'s (faded: not in " + D.ranks[gState.rank].label + ")" : " rank(s) with this structure");
    var svg = d.querySelector("svg");
    if (svg) relabel(svg, D.vals[gState.rank]);
    colorGraph();
  }
  function colorGraph() {
    var d = $("lv-" + gState.group + "-" + gState.loop);
    var svg = d && d.querySelector("svg");
    var m = gMetric.selectedIndex;
    if (!svg) { $("g-legend").textContent = ""; return; }
    var vals = D.vals[gState.rank], byRank = gScale.value === "rank";
    var mx = recolor(svg, gState.group, function (k) {
      var v = vals[k]; return v ? v[m] : null;
    }, function (v, max) { return v === null ? "#ffffff" : heat(max > 0 ? v / max : 0); }, byRank ? rankMax(vals, m) : 0);
    var name = gMetric.value;
    $("g-legend").textContent = name + ": yellow 0, red = " + (byRank ? fmtV(name, mx[0]) + ", the rank's largest node or edge on any level" :
      fmtV(name, mx[0]) + " (nodes), " + fmtV(name, mx[1]) + " (edges) of this level") + "; MPI_Init grey (start-up)";
  }
  gRank.addEventListener("change", function () {
    var g = D.ranks[gRank.value].group;
    gState.rank = +gRank.value;
    // Within a group the drawing stays, at the same level, with this
    // rank's values.
    showLevel(g, g === gState.group ? gState.loop : 0);
  });
  gMetric.addEventListener("change", colorGraph);
  gScale.addEventListener("change", colorGraph);
  $("g-levels").addEventListener("click", function (ev) {
    var a = ev.target.closest && ev.target.closest("a[href^='#lv-']");
    if (!a) return;
    // The link also changes the fragment (see navigation), so that Back
    // returns to the level shown before.
    var m = /^#lv-(\d+)-(\d+)$/.exec(a.getAttribute("href"));
    if (m) showLevel(+m[1], +m[2]);
  });
  if (D.ranks.length) showLevel(D.ranks[0].group, 0);

  // ---- compare two ranks
  var cA = $("c-a"), cB = $("c-b"), cM = $("c-metric"), cState = { loop: 0 };
  D.ranks.forEach(function (r, i) {
    cA.appendChild(el("option", { value: i }, r.label));
    cB.appendChild(el("option", { value: i }, r.label));
  });
  cA.value = D.cmp[0]; cB.value = D.cmp[1];
  // loopIDs[g][key] is the loop number, in group g, of the loop whose
  // node has element key: loops are matched across ranks by header (the
  // key), but numbered by each rank's own order.
  var loopIDs = D.groups.map(function (grp) {
    var m = {};
    grp.levels.forEach(function (lv) { if (lv.key >= 0) m[lv.key] = lv.loop; });
    return m;
  });
  function compare() {
    var a = +cA.value, b = +cB.value, m = +cM.value, g = D.ranks[a].group, gb = D.ranks[b].group;
    var view = $("c-view"), crumbs = $("c-crumbs"), note = $("c-groups");
    var va = D.vals[a], vb = D.vals[b], mname = cM.options[cM.selectedIndex].text;
    view.textContent = ""; crumbs.textContent = "";
    // Differences are scaled by the ranks' total time (for time) or their
    // largest value, so that a small difference stays pale.
    var ref = m === MI.time ? Math.max(D.ranks[a].total || 0, D.ranks[b].total || 0) : Math.max(rankMax(va, m), rankMax(vb, m));
    var get = function (vals, k) { var v = vals[k]; return v && v[m] !== null ? v[m] : 0; };
    var fmtAB = function (vals, k) { return vals[k] ? fmtV(mname, get(vals, k)) : "absent"; };
    var loopName = function (r, k) { var id = loopIDs[D.ranks[r].group][k]; return id ? "Loop " + id : null; };
    note.hidden = g === gb;
    note.textContent = g === gb ? "" : D.ranks[a].label + " is in group " + (g + 1) + " and " + D.ranks[b].label + " in group " + (gb + 1) +
      ": their graphs differ. Calls are matched by call site and loops by header, whatever their loop numbers; grey hatched elements are absent from one rank.";
    var src = $("lv-" + g + "-" + cState.loop);
    var svg0 = src && src.querySelector("svg");
    if (!svg0) {
      view.appendChild(el("p", { "class": "note" }, "The graph of " + D.ranks[a].label + " is not embedded in this report."));
    } else {
      var svg = svg0.cloneNode(true);
      relabel(svg, va);
      var mx = recolor(svg, g, function (k) { return va[k] && vb[k] ? get(vb, k) - get(va, k) : null; },
        function (v, max) { return v === null ? "#e4e4e4" : diverge(max > 0 ? v / max : 0); }, ref);
      var absent = 0;
      svg.querySelectorAll("g.node, g.edge").forEach(function (n) {
        var k = elemKey(n), t = n.querySelector("title");
        if (k < 0) return;
        if (!vb[k]) {
          absent++;
          shapes(n).forEach(function (s) { s.setAttribute("stroke-dasharray", "3 2"); if (n.classList.contains("edge")) s.setAttribute("stroke", "#b0b0b0"); });
        }
        var la = loopName(a, k), lb = loopName(b, k), name = D.elems[k];
        if (la) name = la + (lb && lb !== la ? " (" + lb + " in B)" : "") + " " + name.replace(/^loop /, "");
        if (t) t.textContent = name + "\n" + mname + ": A " + fmtAB(va, k) + ", B " + fmtAB(vb, k) +
          (vb[k] ? ", B\u2212A " + fmtV(mname, get(vb, k) - get(va, k)) : "");
      });
      view.appendChild(svg);
      $("c-legend").textContent = "blue: B lower, red: B higher; full color at " + fmtV(mname, mx[0]) +
        (m === MI.time ? " (the larger rank's time after MPI_Init)" : " (the ranks' largest value)") + (absent ? "; " + absent + " element(s) absent in B (grey)" : "");
      var lv = D.groups[g].levels[cState.loop];
      if (cState.loop > 0) {
        var top = el("a", { href: "#" }, "top level");
        top.addEventListener("click", function (ev) { ev.preventDefault(); cState.loop = 0; compare(); });
        crumbs.appendChild(top);
        crumbs.appendChild(document.createTextNode(" \u203a " + lv.name + " of " + D.ranks[a].label));
        var kb = loopIDs[gb][lv.key];
        crumbs.appendChild(document.createTextNode(kb ? (g !== gb || kb !== cState.loop ? " (Loop " + kb + " of " + D.ranks[b].label + ")" : "") :
          " (" + D.ranks[b].label + " has no loop with this header)"));
      } else {
        crumbs.appendChild(document.createTextNode("top level of " + D.ranks[a].label));
      }
    }
    // Largest differences over all elements of both ranks; an element
    // one rank lacks counts as 0 there and is marked absent.
    var keys = {}, rows = [];
    [va, vb].forEach(function (v) { for (var k in v) keys[k] = true; });
    for (var k in keys) rows.push([+k, get(va, k), get(vb, k)]);
    rows.sort(function (x, y) { return Math.abs(y[2] - y[1]) - Math.abs(x[2] - x[1]); });
    var tb = document.querySelector("#c-table tbody");
    tb.textContent = "";
    rows.slice(0, 12).forEach(function (r) {
      var tr = el("tr"), k = r[0], la = loopName(a, k), lb = loopName(b, k), name = D.elems[k];
      if (la || lb) name = (la === lb ? la : (la || "no loop") + " in A, " + (lb || "no loop") + " in B") + " " + name.replace(/^loop /, "");
      tr.appendChild(el("td", { title: name }, name));
      tr.appendChild(el("td", {}, fmtAB(va, k)));
      tr.appendChild(el("td", {}, fmtAB(vb, k)));
      tr.appendChild(el("td", {}, fmtV(mname, r[2] - r[1])));
      tb.appendChild(tr);
    });
  }
  [cA, cB, cM].forEach(function (s) { s.addEventListener("change", function () { if (s === cA) cState.loop = 0; compare(); }); });
  $("c-view").addEventListener("click", function (ev) {
    var a = ev.target.closest && ev.target.closest("a[href^='#lv-']");
    if (!a) return;
    ev.preventDefault();
    var m = /^#lv-(\d+)-(\d+)$/.exec(a.getAttribute("href"));
    if (m) { cState.loop = +m[2]; compare(); }
  });
  if (D.ranks.length) compare();

  // ---- timeline
  var T = D.timeline, tCanvas = $("t-canvas"), tState = null;
  function decode(r) {
    if (r.dec) return r.dec;
    var s = r.segs, n = s.length / 4, st = new Float64Array(n), en = new Float64Array(n), c = new Int32Array(n),
      busy = new Float32Array(n), t = 0;
    for (var i = 0; i < n; i++) {
      t += s[4 * i]; st[i] = t; t += s[4 * i + 1]; en[i] = t; c[i] = s[4 * i + 2]; busy[i] = s[4 * i + 3] / 1000;
    }
    r.dec = { st: st, en: en, c: c, busy: busy };
    return r.dec;
  }
  // fmt3 formats seconds with 3 significant digits, for hover texts.
  function fmt3(s) { return s === 0 ? "0" : fmtG(s, 3); }
  function drawTimeline() {
    if (!T || !tState) return;
    var dpr = window.devicePixelRatio || 1, W = tCanvas.clientWidth || 900;
    var rows = tState.rows, rowH = Math.max(3, Math.min(18, Math.floor(560 / Math.max(rows.length, 1))));
    var labelW = 70, axisH = 22, H = rows.length * rowH + axisH + 4;
    tCanvas.width = W * dpr; tCanvas.height = H * dpr; tCanvas.style.height = H + "px";
    var ctx = tCanvas.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    var t0 = tState.from / T.tick, t1 = tState.to / T.tick, scale = (W - labelW - 8) / Math.max(t1 - t0, 1e-9);
    ctx.font = "10px sans-serif";
    var drawn = 0, seen = 0, ncalls = D.calls.length, inCall = new Float64Array(ncalls);
    // Each pixel column of a row shows the time each call takes in it: a
    // bar per call, stacked from the bottom in the order of the call list,
    // as tall as the call's share of the column's time (compute is the
    // background), so that the picture has the run's proportions at every
    // zoom. Heights are whole pixels; what a column rounds off is carried
    // to the call's next column, so that each call's area in a row is its
    // time. Equal neighbouring columns are drawn as one rectangle.
    var cols = Math.max(1, Math.floor(W - labelW - 8)), colT = (t1 - t0) / cols, inner = rowH - 2;
    var acc = new Float64Array(cols * ncalls), carry = new Float64Array(ncalls), used = new Uint8Array(cols);
    var rowOf = {};
    rows.forEach(function (ri, y) {
      rowOf[ri] = y;
      var r = T.ranks[ri], d = decode(r), top = y * rowH;
      ctx.fillStyle = y % 2 ? "#f3f4f6" : "#fafafa";
      ctx.fillRect(labelW, top, W - labelW, rowH);
      if (rowH >= 8) { ctx.fillStyle = "#333"; ctx.fillText(r.label, 2, top + rowH - 2); }
      acc.fill(0); carry.fill(0); used.fill(0);
      // first segment ending after t0
      var lo = 0, hi = d.en.length;
      while (lo < hi) { var mid = (lo + hi) >> 1; if (d.en[mid] < t0) lo = mid + 1; else hi = mid; }
      for (var i = lo; i < d.st.length && d.st[i] <= t1; i++) {
        var c = d.c[i], ci = c < 0 ? -c - 1 : c, a = Math.max(d.st[i], t0), b = Math.min(d.en[i], t1);
        if (b <= a || ci >= ncalls) continue;
        seen++;
        // A merged segment counts its time in MPI for its main call.
        var w = c < 0 ? d.busy[i] : 1, ca = Math.floor((a - t0) / colT), cb = Math.min(cols - 1, Math.floor((b - t0) / colT));
        inCall[ci] += (b - a) * w;
        if (ca === cb) { acc[ca * ncalls + ci] += (b - a) * w; used[ca] = 1; continue; }
        acc[ca * ncalls + ci] += (t0 + (ca + 1) * colT - a) * w;
        for (var x = ca + 1; x < cb; x++) acc[x * ncalls + ci] += colT * w;
        acc[cb * ncalls + ci] += (b - t0 - cb * colT) * w;
        for (x = ca; x <= cb; x++) used[x] = 1;
      }
      var run = null, runX = 0; // the pieces [call, y, h] of the columns from runX on
      function flush(x) {
        if (run) run.forEach(function (p) { ctx.fillStyle = D.colors[p[0]] || "#7f7f7f"; ctx.fillRect(labelW + runX, p[1], x - runX, p[2]); drawn++; });
        run = null;
      }
      for (x = 0; x < cols; x++) {
        var pieces = [], yb = top + 1 + inner;
        if (used[x]) {
          for (ci = 0; ci < ncalls; ci++) {
            var v = acc[x * ncalls + ci];
            if (v <= 0) continue;
            var h = inner * Math.min(v / colT, 1) + carry[ci], hp = Math.max(0, Math.min(Math.round(h), yb - top - 1));
            carry[ci] = h - hp;
            if (hp > 0) { yb -= hp; pieces.push([ci, yb, hp]); }
          }
        }
        var same = run && run.length === pieces.length && pieces.every(function (p, k) { return p[0] === run[k][0] && p[1] === run[k][1] && p[2] === run[k][2]; });
        if (!same) { flush(x); if (pieces.length) { run = pieces; runX = x; } }
      }
      flush(cols);
    });
    // Messages between the rows shown, drawn only when few enough are in
    // view to be told apart.
    // A message is in view when both its ends are in the window widened
    // by half its width on each side.
    var M = T.msgs || [], inView = [], m0 = t0 - (t1 - t0) / 2, m1 = t1 + (t1 - t0) / 2;
    for (var k = 0; k < M.length; k += 4) {
      if (Math.min(M[k + 1], M[k + 3]) < m0 || Math.max(M[k + 1], M[k + 3]) > m1 || rowOf[M[k]] === undefined || rowOf[M[k + 2]] === undefined) continue;
      inView.push(k);
    }
    var msgInfo = "";
    if (inView.length && inView.length <= 400) {
      ctx.strokeStyle = "rgba(20,20,20,0.7)"; ctx.lineWidth = 1;
      // clipped to the rows, right of the labels
      ctx.save();
      ctx.beginPath(); ctx.rect(labelW, 0, W - labelW, rows.length * rowH); ctx.clip();
      ctx.beginPath();
      inView.forEach(function (k) {
        var xa = labelW + (M[k + 1] - t0) * scale, ya = (rowOf[M[k]] + 0.5) * rowH,
          xb = labelW + (M[k + 3] - t0) * scale, yb = (rowOf[M[k + 2]] + 0.5) * rowH;
        ctx.moveTo(xa, ya); ctx.lineTo(xb, yb);
        // an arrowhead at the receiving end
        var a = Math.atan2(yb - ya, xb - xa), l = Math.min(6, Math.hypot(xb - xa, yb - ya) / 2);
        ctx.moveTo(xb - l * Math.cos(a - 0.45), yb - l * Math.sin(a - 0.45)); ctx.lineTo(xb, yb);
        ctx.lineTo(xb - l * Math.cos(a + 0.45), yb - l * Math.sin(a + 0.45));
      });
      ctx.stroke();
      ctx.restore();
      msgInfo = ", " + inView.length + " messages";
    } else if (inView.length) msgInfo = ", " + inView.length + " messages (zoom in to see them)";
    tCanvas.dataset.msgs = inView.length <= 400 ? inView.length : 0;
    // time axis; labels that would pass the right edge end at it
    ctx.fillStyle = "#333"; ctx.strokeStyle = "#999";
    var y0 = rows.length * rowH + 2, span = tState.to - tState.from;
    var step = Math.pow(10, Math.floor(Math.log10(span / 6 || 1)));
    if (span / step > 12) step *= 5; else if (span / step > 6) step *= 2;
    // Labels have the decimals of the step, so that neighbours differ
    // however deep the zoom.
    var dec = Math.max(0, Math.min(12, -Math.floor(Math.log10(step) + 1e-9))), ticks = [];
    for (var k = Math.ceil(tState.from / step); k * step <= tState.to; k++) {
      var v = k * step, x = labelW + (v - tState.from) / span * (W - labelW - 8), lab = v.toFixed(dec) + " s", tw = ctx.measureText(lab).width;
      ticks.push(lab);
      ctx.beginPath(); ctx.moveTo(x, y0); ctx.lineTo(x, y0 + 5); ctx.stroke();
      ctx.fillText(lab, Math.min(x + 2, W - tw - 1), y0 + 14);
    }
    tCanvas.dataset.drawn = drawn; tCanvas.dataset.ticks = ticks.join("|");
    tCanvas.dataset.rows = rows.length; tCanvas.dataset.rowh = rowH; tCanvas.dataset.labelw = labelW; tCanvas.dataset.right = labelW + cols;
    tState.labelW = labelW; tState.rowH = rowH; tState.W = W;
    // The window's ends with enough decimals to tell them apart (a
    // thousandth of its width), so that "show" gives it back.
    var wdec = Math.max(3, Math.min(12, 3 - Math.floor(Math.log10(span || 1))));
    $("t-from").value = +tState.from.toFixed(wdec); $("t-to").value = +tState.to.toFixed(wdec);
    $("t-info").textContent = rows.length + " rank(s), " + seen + (T.exact ? " events in view (every event recorded)" : " segments in view") + msgInfo;
    windowStats(inCall, (t1 - t0) * rows.length);
  }
  // windowStats lists the time per call in the visible window over the
  // rows shown, and its share of their time: the recorded times for the
  // whole run and for the run after MPI_Init (each rank after its own, as
  // the call table), else the drawn segments' (approximate when calls were
  // merged).
  function windowStats(inCall, total) {
    var box = $("t-stats"), idx = [], title = "In this window: ", before = box.offsetHeight;
    box.textContent = "";
    var mpi = 0;
    inCall.forEach(function (v) { mpi += v; });
    tCanvas.dataset.share = total > 0 ? mpi / total : 0;
    var whole = tState.from <= 0, afterInit = T.start > 0 && Math.abs(tState.from - T.start) <= T.tick;
    if (tState.to >= T.span && (whole || afterInit)) {
      inCall = new Float64Array(inCall.length);
      tState.rows.forEach(function (ri) {
        (T.ranks[ri].calls || []).forEach(function (ns, i) {
          if (whole || !/^MPI_Init/.test(D.calls[i])) inCall[i] += ns * 1e-9 / T.tick;
        });
      });
      title = whole ? "The whole run (recorded times): " : "After MPI_Init (each rank after its own, recorded times, as the call table): ";
    } else if (!T.exact) title = "In this window (approximate: calls shorter than half a pixel of the whole run count for their pixel's main call): ";
    for (var i = 0; i < inCall.length; i++) if (inCall[i] > 0) idx.push(i);
    idx.sort(function (a, b) { return inCall[b] - inCall[a]; });
    mpi = 0;
    idx.forEach(function (i) { mpi += inCall[i]; });
    box.appendChild(el("b", {}, title));
    box.appendChild(document.createTextNode(fmt3(mpi * T.tick) + " s in MPI over " + tState.rows.length + " rank(s) (" +
      (total > 0 ? (100 * mpi / total).toFixed(1) : "0") + " % of their time)"));
    idx.slice(0, 12).forEach(function (i) {
      var sp = el("span"), b = el("i");
      b.style.background = D.colors[i];
      sp.appendChild(b);
      sp.appendChild(document.createTextNode(D.calls[i] + " " + fmt3(inCall[i] * T.tick) + " s (" + (total > 0 ? (100 * inCall[i] / total).toFixed(1) : "0") + " %)"));
      box.appendChild(sp);
    });
    box.dataset.calls = idx.length;
    // While the wheel zooms the box does not shrink, so that the page
    // keeps its height under the pointer (else the next turn scrolls).
    box.style.minHeight = tState.wheel ? Math.max(before, parseFloat(box.style.minHeight) || 0) + "px" : "";
  }
  function setTimeline(rankList, from, to) {
    if (!T) return;
    var byRank = {}, rows = [];
    T.ranks.forEach(function (r, i) { var k = D.ranks[r.i].rank; (byRank[k] = byRank[k] || []).push(i); });
    (rankList || []).forEach(function (r) { (byRank[r] || []).forEach(function (i) { rows.push(i); }); });
    var missing = (rankList || []).length && !rows.length;
    if (!rows.length) rows = T.ranks.map(function (_, i) { return i; }).slice(0, 32);
    tState = { rows: rows, from: Math.max(0, from || 0), to: to > (from || 0) ? to : T.span };
    drawTimeline();
    if (missing) $("t-info").textContent += " (the selected ranks are not in the timeline: it holds " + T.ranks.length + " of the " + D.ranks.length + " ranks, as its note says)";
  }
  // zoomTo shows [from, to] of the run, kept within it and at least a
  // few ticks wide.
  function zoomTo(from, to) {
    var w = Math.min(Math.max(to - from, 20 * T.tick), T.span);
    from = Math.max(0, Math.min(from, T.span - w));
    tState.from = from; tState.to = from + w;
    drawTimeline();
  }
  if (T) {
    $("t-ranks").value = formatRanks(T.ranks.slice(0, 32).map(function (r) { return D.ranks[r.i].rank; }));
    if (T.msgnote) $("t-msgnote").textContent = "Messages: " + T.msgnote + ".";
    setTimeline(parseRanks($("t-ranks").value), T.start || 0, T.span);
    $("t-apply").addEventListener("click", function () {
      setTimeline(parseRanks($("t-ranks").value), parseFloat($("t-from").value) || 0, parseFloat($("t-to").value) || T.span);
    });
    $("t-reset").addEventListener("click", function () { zoomTo(0, T.span); });
    var timeAt = function (x) { return tState.from + (x - tState.labelW) / (tState.W - tState.labelW - 8) * (tState.to - tState.from); };
    // Drag pans; shift-drag selects a window to zoom into; the wheel
    // zooms around the pointer; double-click shows everything.
    var drag = null;
    tCanvas.addEventListener("mousedown", function (ev) {
      drag = { x: ev.offsetX, from: tState.from, to: tState.to, box: ev.shiftKey };
      tCanvas.style.cursor = ev.shiftKey ? "col-resize" : "grabbing";
      ev.preventDefault();
    });
    tCanvas.addEventListener("mousemove", function (ev) {
      if (!drag || drag.box) return;
      var dt = (ev.offsetX - drag.x) / (tState.W - tState.labelW - 8) * (drag.to - drag.from);
      if (dt !== 0) zoomTo(drag.from - dt, drag.to - dt);
    });
    window.addEventListener("mouseup", function (ev) {
      if (!drag) return;
      var d = drag; drag = null; tCanvas.style.cursor = "";
      if (!d.box || ev.target !== tCanvas) return;
      var a = Math.min(d.x, ev.offsetX), b = Math.max(d.x, ev.offsetX);
      if (b - a >= 4) zoomTo(timeAt(a), timeAt(b));
    });
    tCanvas.addEventListener("wheel", function (ev) {
      if (ev.offsetX < tState.labelW) return;
      ev.preventDefault();
      var f = Math.exp((ev.deltaY || 0) * 0.002), at = timeAt(ev.offsetX);
      tState.wheel = true;
      zoomTo(at - (at - tState.from) * f, at + (tState.to - at) * f);
      tState.wheel = false;
    }, { passive: false });
    tCanvas.addEventListener("dblclick", function () { zoomTo(0, T.span); });
    tCanvas.addEventListener("mousemove", function (ev) {
      if (!tState || drag) return;
      var row = Math.floor(ev.offsetY / tState.rowH);
      if (row < 0 || row >= tState.rows.length || ev.offsetX < tState.labelW) return;
      var r = T.ranks[tState.rows[row]], d = decode(r);
      var t = timeAt(ev.offsetX) / T.tick;
      var lo = 0, hi = d.en.length;
      while (lo < hi) { var mid = (lo + hi) >> 1; if (d.en[mid] < t) lo = mid + 1; else hi = mid; }
      var txt = r.label + " at " + fmt3(t * T.tick) + " s";
      if (lo < d.st.length && d.st[lo] <= t + 2) {
        var c = d.c[lo], ci = c < 0 ? -c - 1 : c;
        txt += ": " + D.calls[ci] + (c < 0 ? " and other short calls, " + Math.round(100 * d.busy[lo]) + "% in MPI over" : "") + " " +
          fmt3((d.en[lo] - d.st[lo]) * T.tick) + " s, from " + fmt3(d.st[lo] * T.tick) + " s";
      } else txt += ": compute";
      tCanvas.title = txt;
    });
    window.addEventListener("resize", drawTimeline);
    var tl = $("t-legend");
    D.calls.forEach(function (c, i) {
      var s = el("span"); var b = el("i"); b.style.background = D.colors[i]; s.appendChild(b); s.appendChild(document.createTextNode(c)); tl.appendChild(s);
    });
  } else {
    tCanvas.hidden = true;
  }

  // ---- Ocelotl overview
  var O = D.ocelotl;
  function ocelotl() {
    if (!O) return;
    // V is the shown view: a window of the run cut into slices, each
    // with its micro model and partitions computed at report time.
    var slider = $("o-p"), view = $("o-view"), V = O.views[0], nt = V.bounds.length - 1;
    var legend = $("o-legend"), oWin = $("o-window"), oSlices = $("o-slices");
    O.states.forEach(function (s, i) {
      var sp = el("span"); var b = el("i"); b.style.background = O.colors[i]; sp.appendChild(b); sp.appendChild(document.createTextNode(s)); legend.appendChild(sp);
    });
    var windows = [];
    O.views.forEach(function (v) { if (windows.indexOf(v.window) < 0) windows.push(v.window); });
    windows.forEach(function (w) {
      var v = O.views.find(function (x) { return x.window === w; });
      oWin.appendChild(el("option", { value: w }, w + " (" + fmtS(v.bounds[0]) + " s to " + fmtS(v.bounds[v.bounds.length - 1]) + " s)"));
    });
    function fillSlices() {
      var cur = +oSlices.value || V.slices;
      oSlices.textContent = "";
      O.views.forEach(function (v) { if (v.window === oWin.value) oSlices.appendChild(el("option", { value: v.slices }, String(v.slices))); });
      oSlices.value = cur;
      if (oSlices.selectedIndex < 0) oSlices.selectedIndex = 0;
    }
    // setView shows the view of the selected window and slices, at its
    // suggested p.
    function setView() {
      V = O.views.find(function (v) { return v.window === oWin.value && v.slices === +oSlices.value; }) || O.views[0];
      nt = V.bounds.length - 1;
      slider.max = V.parts.length - 1;
      var start = 0;
      V.parts.forEach(function (p, i) { if (p.p <= V.suggest) start = i; });
      slider.value = start;
      $("o-vnote").textContent = V.note || "";
    }
    oWin.value = V.window;
    fillSlices();
    oSlices.value = V.slices;
    setView();
    // descendants' leaf rows are contiguous: node n covers rows [row, row+rows)
    var children = O.nodes.map(function () { return []; });
    O.nodes.forEach(function (n, i) { if (n.parent >= 0) children[n.parent].push(i); });
    function mix(r0, r1, f, l) { // state time per state over rows x slices
      var acc = new Float64Array(O.states.length);
      for (var r = r0; r < r1; r++) {
        var m = V.micro[r], k = 0;
        for (var t = 0; t < nt; t++) {
          var c = m[k++];
          for (var j = 0; j < c; j++) { if (t >= f && t <= l) acc[m[k]] += m[k + 1]; k += 2; }
        }
      }
      var tot = (r1 - r0) * (l - f + 1) * 1000, mode = 0;
      for (var x = 0; x < acc.length; x++) { acc[x] /= tot; if (acc[x] > acc[mode]) mode = x; }
      return { prop: acc, mode: mode };
    }
    function path(n) {
      var p = [];
      for (; n >= 0; n = O.nodes[n].parent) p.unshift(O.nodes[n].name);
      return p.join("/");
    }
    function draw() {
      var part = V.parts[+slider.value];
      // H is rowsPx of report/ocelotl.go, whose suggested p depends on it.
      var W = view.clientWidth || 900, H = Math.max(160, Math.min(560, O.rows * 14)), L = 100, rowH = H / O.rows;
      var x = function (t) { return L + (V.bounds[t] - V.bounds[0]) / (V.bounds[nt] - V.bounds[0]) * (W - L - 4); };
      var svg = sel("svg", { width: W, height: H + 20, viewBox: "0 0 " + W + " " + (H + 20) });
      var count = 0, minPx = 4;
      // cells by node
      var cells = {};
      for (var i = 0; i < part.cells.length; i += 5) {
        var n = part.cells[i];
        (cells[n] = cells[n] || []).push(part.cells.slice(i, i + 5));
      }
      function cellsUnder(n) { // all cells of n's subtree
        var out = [], st = [n];
        while (st.length) { var v = st.pop(); (cells[v] || []).forEach(function (c) { out.push(c); }); children[v].forEach(function (c) { st.push(c); }); }
        return out;
      }
      function rect(r0, r1, f, l, mode, share, info, mark) {
        var y0 = r0 * rowH, y1 = r1 * rowH, x0 = x(f), x1 = x(l + 1);
        // mode < 0: no state at all (the resources were not running yet)
        var g = sel("rect", { x: x0, y: y0, width: Math.max(x1 - x0 - 0.5, 0.5), height: Math.max(y1 - y0 - 0.3, 0.5),
          fill: mode >= 0 ? O.colors[mode] : "#ffffff", "fill-opacity": mode >= 0 ? Math.max(0.15, share) : 0, "class": "agg" });
        g.__info = info;
        svg.appendChild(g); count++;
        if (mark) {
          var ln = { stroke: "#222", "stroke-width": 0.6, "stroke-opacity": 0.45, "pointer-events": "none" };
          svg.appendChild(sel("line", Object.assign({ x1: x0, y1: y1, x2: x1, y2: y0 }, ln)));
          if (mark === "cross") svg.appendChild(sel("line", Object.assign({ x1: x0, y1: y0, x2: x1, y2: y1 }, ln)));
        }
      }
      function drawBand(nodes) { // thin nodes drawn as one visual aggregate
        var r0 = O.nodes[nodes[0]].row, last = O.nodes[nodes[nodes.length - 1]];
        var r1 = last.row + last.rows, cs = [];
        nodes.forEach(function (n) { cellsUnder(n).forEach(function (c) { cs.push(c); }); });
        if (nodes.length === 1 && (cells[nodes[0]] || []).length === cs.length) { // a real aggregate, just thin
          cs.forEach(function (c) { rect(r0, r1, c[1], c[2], c[3], c[4] / 1000, { node: c[0], f: c[1], l: c[2] }); });
          return;
        }
        // per row: its time cuts
        var cuts = {};
        cs.forEach(function (c) {
          var nd = O.nodes[c[0]];
          for (var r = nd.row; r < nd.row + nd.rows; r++) (cuts[r] = cuts[r] || []).push(c[1]);
        });
        var sig = null, same = true, union = {};
        for (var r = r0; r < r1; r++) {
          var s = (cuts[r] || []).sort(function (a, b) { return a - b; });
          s.forEach(function (v) { union[v] = true; });
          var k = s.join(",");
          if (sig === null) sig = k; else if (sig !== k) same = false;
        }
        var starts = Object.keys(union).map(Number).sort(function (a, b) { return a - b; });
        if (!same) starts = [0];
        starts.forEach(function (f, i) {
          var l = i + 1 < starts.length ? starts[i + 1] - 1 : nt - 1, m = mix(r0, r1, f, l);
          rect(r0, r1, f, l, m.mode, m.prop[m.mode], { rows: [r0, r1], f: f, l: l, nodes: nodes }, same ? "diag" : "cross");
        });
      }
      function visit(n) {
        (cells[n] || []).forEach(function (c) {
          var nd = O.nodes[n];
          rect(nd.row, nd.row + nd.rows, c[1], c[2], c[3], c[4] / 1000, { node: n, f: c[1], l: c[2] });
        });
        var band = [], bandH = 0;
        var flush = function () { if (band.length) drawBand(band); band = []; bandH = 0; };
        children[n].forEach(function (c) {
          var h = O.nodes[c].rows * rowH;
          if (h >= minPx) { flush(); visit(c); return; }
          band.push(c); bandH += h;
          if (bandH >= minPx) flush();
        });
        flush();
      }
      visit(0);
      // resource axis: the ranks when their rows are tall enough to read,
      // else the hosts (the hierarchy's second level)
      O.nodes.forEach(function (nd, i) {
        var h = nd.rows * rowH, leaf = children[i].length === 0;
        if (leaf ? h < 9 : nd.depth !== 1 || rowH >= 9 || h < 12) return;
        var lb = sel("text", { x: L - 4, y: (nd.row + nd.rows / 2) * rowH + 3, "font-size": 10, fill: leaf ? "#333" : "#000",
          "text-anchor": "end", "class": "o-label" });
        lb.textContent = nd.name.length > 16 ? nd.name.slice(0, 15) + "\u2026" : nd.name;
        svg.appendChild(lb);
        if (!leaf) svg.appendChild(sel("line", { x1: L - 2, y1: nd.row * rowH + 1, x2: L - 2, y2: (nd.row + nd.rows) * rowH - 1, stroke: "#888" }));
      });
      // time axis
      for (var t = 0; t <= nt; t += Math.max(1, Math.round(nt / 6))) {
        var tx = sel("text", { x: x(t), y: H + 14, "font-size": 10, fill: "#555", "text-anchor": t === 0 ? "start" : t + Math.max(1, Math.round(nt / 6)) > nt ? "end" : "middle" });
        tx.textContent = (+V.bounds[t].toPrecision(3)) + " s"; // slice bounds: not round numbers
        svg.appendChild(tx);
      }
      svg.setAttribute("data-count", count);
      svg.setAttribute("data-slices", nt);
      view.textContent = "";
      view.appendChild(svg);
      $("o-pval").textContent = "p = " + part.p.toFixed(4) + " \u00b7 " + part.n + " aggregates, " + count + " drawn \u00b7 gain " +
        part.ng.toFixed(3) + ", loss " + part.nl.toFixed(3);
      curves(part.p);
    }
    function describe(info) {
      var r0, r1, name;
      if (info.node !== undefined) { var nd = O.nodes[info.node]; r0 = nd.row; r1 = nd.row + nd.rows; name = path(info.node); }
      else { r0 = info.rows[0]; r1 = info.rows[1]; name = path(info.nodes[0]) + (info.nodes.length > 1 ? " \u2026 " + O.nodes[info.nodes[info.nodes.length - 1]].name : "") + " (merged for display)"; }
      var m = mix(r0, r1, info.f, info.l), box = $("o-info");
      box.textContent = "";
      box.appendChild(el("div", {}, name));
      box.appendChild(el("div", {}, (r1 - r0) + " resource(s), " + fmtS(V.bounds[info.f]) + " s to " + fmtS(V.bounds[info.l + 1]) + " s"));
      var tb = el("table"), idx = m.prop.map(function (_, i) { return i; }).sort(function (a, b) { return m.prop[b] - m.prop[a]; });
      idx.slice(0, 10).forEach(function (i) {
        if (m.prop[i] <= 0) return;
        var tr = el("tr"), c = el("td"), b = el("i");
        b.style.cssText = "display:inline-block;width:10px;height:10px;background:" + O.colors[i];
        c.appendChild(b); tr.appendChild(c);
        tr.appendChild(el("td", {}, O.states[i])); tr.appendChild(el("td", {}, (100 * m.prop[i]).toFixed(1) + " %"));
        tb.appendChild(tr);
      });
      box.appendChild(tb);
      return { r0: r0, r1: r1 };
    }
    function curves(p) {
      var W = 280, H = 150, svg = sel("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H });
      var x = function (v) { return 30 + v * (W - 40); }, y = function (v) { return 10 + (1 - v) * (H - 40); };
      [["ng", "#2ca02c", "gain"], ["nl", "#d62728", "loss"]].forEach(function (s, j) {
        var pts = [];
        V.parts.forEach(function (pt, i) {
          var nx = i + 1 < V.parts.length ? V.parts[i + 1].p : 1;
          pts.push(x(pt.p) + "," + y(pt[s[0]]), x(nx) + "," + y(pt[s[0]]));
        });
        svg.appendChild(sel("polyline", { points: pts.join(" "), fill: "none", stroke: s[1], "stroke-width": 2 }));
        // The legend sits under the axis, where no curve goes.
        var t = sel("text", { x: W / 2 - 40 + 50 * j, y: H - 2, fill: s[1], "font-size": 11 }); t.textContent = s[2]; svg.appendChild(t);
      });
      svg.appendChild(sel("line", { x1: x(0), y1: y(0), x2: x(1), y2: y(0), stroke: "#888" }));
      svg.appendChild(sel("line", { x1: x(p), y1: y(1), x2: x(p), y2: y(0), stroke: "#000", "stroke-dasharray": "3 2" }));
      var t = sel("text", { x: x(0), y: H - 12, "font-size": 10, fill: "#555" }); t.textContent = "p: 0"; svg.appendChild(t);
      t = sel("text", { x: x(1) - 10, y: H - 12, "font-size": 10, fill: "#555" }); t.textContent = "1"; svg.appendChild(t);
      t = sel("text", { x: 2, y: 12, "font-size": 10, fill: "#555" }); t.textContent = "normalized"; svg.appendChild(t);
      var c = $("o-curves"); c.textContent = ""; c.appendChild(svg);
    }
    slider.addEventListener("input", draw);
    oWin.addEventListener("change", function () { fillSlices(); setView(); draw(); });
    oSlices.addEventListener("change", function () { setView(); draw(); });
    view.addEventListener("mouseover", function (ev) { if (ev.target.__info) describe(ev.target.__info); });
    view.addEventListener("click", function (ev) {
      var info = ev.target.__info; if (!info || !T) return;
      var rr = describe(info), ranks = [];
      for (var r = rr.r0; r < rr.r1 && ranks.length < 128; r++) ranks.push(O.ranks[r][0]);
      $("t-ranks").value = ranks.length > 1 ? ranks[0] + "-" + ranks[ranks.length - 1] : String(ranks[0]);
      setTimeline(ranks, V.bounds[info.f], V.bounds[info.l + 1]);
      $("timeline").scrollIntoView();
    });
    window.addEventListener("resize", draw);
    draw();
  }
  ocelotl();

  // ---- load balance: ranks in rank order or by MPI time
  if ($("lb-order")) $("lb-order").addEventListener("change", function () {
    var mpi = $("lb-order").value === "mpi";
    $("lb-by-rank").hidden = mpi; $("lb-by-mpi").hidden = !mpi;
  });

  // A click on a rank of the per-rank charts shows it (the first of a
  // column of ranks) in the graphs, and the column in the timeline.
  $("load-balance").addEventListener("click", function (ev) {
    var r = ev.target.closest && ev.target.closest("rect[data-ranks]");
    if (!r) return;
    var ranks = parseRanks(r.getAttribute("data-ranks")), i = D.ranks.findIndex(function (x) { return x.rank === ranks[0]; });
    if (i >= 0 && gRank.value !== String(i)) { gRank.value = i; gRank.dispatchEvent(new Event("change")); }
    if (T) { $("t-ranks").value = r.getAttribute("data-ranks"); setTimeline(ranks, tState ? tState.from : 0, tState ? tState.to : T.span); }
    $("graphs").scrollIntoView();
  });

  // ---- sortable tables (calls, call sites): a click on a column header
  // sorts the rows by it, numbers by their data-k key largest first, text
  // from A; a second click reverses the order.
  // Long tables show their first rows, with a filter (rows whose text
  // holds it) and a button for the rest.
  var pageRows = 25;
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var ths = table.querySelectorAll("thead th"), refresh = function () {};
    if (table.tBodies[0].rows.length > pageRows) {
      var bar = el("div", { "class": "controls tablebar" }), filter = el("input", { type: "search", placeholder: "filter rows", "aria-label": "filter rows" }),
        info = el("span", { "class": "small" }), more = el("button", { type: "button" }), all = false;
      bar.appendChild(filter); bar.appendChild(info); bar.appendChild(more);
      table.parentNode.insertBefore(bar, table);
      refresh = function () {
        var q = filter.value.trim().toLowerCase(), shown = 0, match = 0;
        Array.prototype.forEach.call(table.tBodies[0].rows, function (tr) {
          var ok = !q || tr.textContent.toLowerCase().indexOf(q) >= 0;
          if (ok) match++;
          tr.hidden = !ok || (!all && match > pageRows);
          if (!tr.hidden) shown++;
        });
        info.textContent = shown + " of " + match + " rows" + (q ? " matching (" + table.tBodies[0].rows.length + " in all)" : "");
        more.textContent = all ? "show the first " + pageRows : "show all";
        more.hidden = match <= pageRows;
        table.dataset.shown = shown;
      };
      filter.addEventListener("input", refresh);
      more.addEventListener("click", function () { all = !all; refresh(); });
      refresh();
    }
    ths.forEach(function (th, col) {
      th.querySelector("button").addEventListener("click", function () {
        var isNum = th.hasAttribute("data-num"), cur = th.getAttribute("aria-sort");
        var asc = cur ? cur !== "ascending" : !isNum;
        ths.forEach(function (o) { o.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        var key = function (tr) {
          var td = tr.cells[col];
          return isNum ? parseFloat(td.getAttribute("data-k")) : td.textContent;
        };
        rows.sort(function (a, b) {
          var x = key(a), y = key(b), c = isNum ? x - y : x.localeCompare(y);
          return asc ? c : -c;
        });
        rows.forEach(function (tr) { body.appendChild(tr); });
        refresh();
      });
    });
  });

  // ---- communication matrix: sender rows, destination columns, colored
  // on a log scale by bytes or messages; hover a cell for its traffic.
  var MX = JSON.parse($("mpiflow-matrix").textContent);

  function traffic(count, bytes) {
    return fmtB(bytes) + " in " + count + " message" + (count === 1 ? "" : "s");
  }
  function matrix() {
    if (!MX) return;
    var box = $("m-view-svg"), mSel = $("m-metric"), vSel = $("m-view"), info = $("m-info");
    function draw() {
      var v = MX.views[+vSel.value], n = v.labels.length, byBytes = mSel.value === "bytes";
      var short = function (s) { return s.length > 16 ? s.slice(0, 15) + "\u2026" : s; };
      var longest = 0;
      v.labels.forEach(function (l) { longest = Math.max(longest, short(l).length); });
      var lw = 10 + 6.5 * longest, avail = Math.min(box.clientWidth || 1000, 1100);
      var cell = Math.floor(Math.max(6, Math.min(28, (avail - lw - 12) / n)));
      var vertical = 6.5 * longest > cell - 2, th = vertical ? lw : 16;
      var W = lw + n * cell + 12, H = th + n * cell + 6;
      var svg = sel("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img" });
      svg.appendChild(sel("rect", { x: lw, y: th, width: n * cell, height: n * cell, fill: "#f3f4f6" }));
      var sent = [], recv = [], mx = 0, mn = Infinity, c = v.cells, k;
      for (k = 0; k < n; k++) { sent.push([0, 0]); recv.push([0, 0]); }
      var grid = {};
      for (k = 0; k < c.length; k += 4) {
        var val = byBytes ? c[k + 3] : c[k + 2];
        mx = Math.max(mx, val);
        if (val > 0) mn = Math.min(mn, val);
        sent[c[k]][0] += c[k + 2]; sent[c[k]][1] += c[k + 3];
        recv[c[k + 1]][0] += c[k + 2]; recv[c[k + 1]][1] += c[k + 3];
        grid[c[k] * n + c[k + 1]] = [c[k + 2], c[k + 3]];
      }
      // A log scale from the smallest cell to the largest, so that cells
      // of 23 to 218 MiB do not all look alike near the top of a scale
      // from 0.
      var lmn = Math.log(mn), span = Math.log(mx) - lmn;
      for (k = 0; k < c.length; k += 4) {
        var x = byBytes ? c[k + 3] : c[k + 2];
        svg.appendChild(sel("rect", { x: lw + c[k + 1] * cell, y: th + c[k] * cell, width: Math.max(cell - 1, 1), height: Math.max(cell - 1, 1),
          fill: x > 0 ? heat(span > 0 ? (Math.log(x) - lmn) / span : 1) : "#ffffff", "class": "cell", "data-i": c[k], "data-j": c[k + 1] }));
      }
      // Labels: every one that fits, at least 12 px apart.
      var every = Math.max(1, Math.ceil(12 / cell));
      v.labels.forEach(function (l, i) {
        if (i % every) return;
        var t = sel("text", { x: lw - 4, y: th + i * cell + cell / 2 + 3, "text-anchor": "end", "class": "tick" });
        t.textContent = short(l);
        svg.appendChild(t);
        var cx = lw + i * cell + cell / 2;
        t = sel("text", vertical ? { x: cx + 3, y: th - 4, "text-anchor": "start", "class": "tick", transform: "rotate(-90 " + (cx + 3) + " " + (th - 4) + ")" }
          : { x: cx, y: th - 4, "text-anchor": "middle", "class": "tick" });
        t.textContent = short(l);
        svg.appendChild(t);
      });
      var hl = sel("rect", { width: cell, height: cell, fill: "none", stroke: "#000", "stroke-width": 1.5, "pointer-events": "none", visibility: "hidden" });
      svg.appendChild(hl);
      svg.addEventListener("mousemove", function (ev) {
        var pt = svg.createSVGPoint();
        pt.x = ev.clientX; pt.y = ev.clientY;
        var p = pt.matrixTransform(svg.getScreenCTM().inverse());
        var i = Math.floor((p.y - th) / cell), j = Math.floor((p.x - lw) / cell);
        if (i < 0 || j < 0 || i >= n || j >= n) { hl.setAttribute("visibility", "hidden"); return; }
        hl.setAttribute("x", lw + j * cell); hl.setAttribute("y", th + i * cell); hl.setAttribute("visibility", "visible");
        var g = grid[i * n + j], from = v.prefix + v.labels[i], to = v.prefix + v.labels[j];
        info.textContent = from + " \u2192 " + to + ": " + (g ? traffic(g[0], g[1]) : "no messages") + ". " +
          from + " sent " + traffic(sent[i][0], sent[i][1]) + " in all; " + to + " received " + traffic(recv[j][0], recv[j][1]) + ".";
      });
      svg.addEventListener("mouseleave", function () { hl.setAttribute("visibility", "hidden"); });
      box.textContent = "";
      box.appendChild(svg);
      var amount = function (x) { return byBytes ? fmtB(x) : x + " message" + (x === 1 ? "" : "s"); };
      $("m-legend").textContent = (byBytes ? "bytes" : "messages") + " per cell, log scale: pale yellow " +
        (mx > 0 ? amount(mn) : "none") + " (the least), red " + amount(mx) + " (the most); grey none";
      box.dataset.cells = c.length / 4;
    }
    mSel.addEventListener("change", draw);
    vSel.addEventListener("change", draw);
    draw();
  }
  matrix();

  // ---- navigation through URL fragments: the navigation bar's links and
  // the links that open a graph level (#lv-G-L) change the fragment, so
  // that the browser's history holds every view and Back returns to the
  // previous one. Each history entry remembers the graph level and rank
  // shown when it was made.
  function openLevel(g, loop, rank) {
    if (!D.groups[g] || !$("lv-" + g + "-" + loop)) return;
    if (rank === undefined || !D.ranks[rank] || D.ranks[rank].group !== g) {
      rank = D.ranks[gState.rank].group === g ? gState.rank : D.groups[g].rep;
    }
    var other = rank !== gState.rank;
    if (other) { gState.rank = rank; gRank.value = rank; }
    if (other || gState.group !== g || gState.loop !== loop) showLevel(g, loop);
  }
  function remember() {
    if (gState.group >= 0) history.replaceState({ lv: [gState.group, gState.loop], rank: gState.rank }, "");
  }
  function route() {
    var m = /^#lv-(\d+)-(\d+)$/.exec(location.hash), st = history.state;
    if (m) openLevel(+m[1], +m[2]);
    else if (st && st.lv) openLevel(st.lv[0], st.lv[1], st.rank);
    remember();
  }
  window.addEventListener("hashchange", route);
  window.addEventListener("popstate", route);
  gRank.addEventListener("change", remember);
  if (D.ranks.length) route();
})();
