// loadnode console: plain JS, no dependencies. It reads and changes jobs
// through the HTTP API (/v1) with its session's bearer token, reads the
// charts' samples from /ui/api/timelines and draws them as inline SVG.
"use strict";
(function () {
  const $ = (sel) => document.querySelector(sel);
  // csrf guards /ui/logout; bearer opens /v1 while the session lives.
  let csrf = "", bearer = "";
  let jobs = [];
  // The list is sorted and filtered on the node, over every job. Without
  // a sort or a filter it is the id order, paged by cursor
  // (/v1/jobs?limit&after): after is the cursor of the
  // page shown, back the cursors of the pages before it. Sorted or
  // filtered, it pages by offset (figures that move between two pages can
  // move a job in the order).
  let sortKey = "", sortDir = 1, filterText = "";
  const pageSize = Number(new URLSearchParams(location.search).get("page_size")) || 100;
  let after = 0, back = [], nextAfter = 0, offset = 0, nextOffset = 0, total = 0, matched = 0;
  let timer = null, filterTimer = null, listSeq = 0;

  // api fetches path: /v1 with the session's bearer token, /ui with the
  // session cookie. An error answer is /v1's {code, message} or /ui's
  // {error}.
  async function api(path, opts) {
    opts = Object.assign({ credentials: "same-origin" }, opts || {});
    if (path.startsWith("/v1/")) opts.headers = Object.assign({ Authorization: "Bearer " + bearer }, opts.headers || {});
    const r = await fetch(path, opts);
    if (r.status === 401) { location.href = "/ui/"; throw new Error("session ended"); }
    const body = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(body.code ? body.code + ": " + body.message : body.error || r.statusText);
    return body;
  }

  // num reads a protojson number: 64-bit integers are strings, zeros are
  // left out.
  function num(v) { return v === undefined ? 0 : Number(v); }

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function lagText(v) { return v < 0 ? "?" : String(v); }
  function fmtTime(ms) { return ms ? new Date(Number(ms)).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z") : "-"; }

  // ------------------------------------------------------------ job list
  function queried() { return sortKey !== "" || filterText !== ""; }

  function renderList() {
    const tb = $("#jobs tbody");
    tb.replaceChildren();
    for (const j of jobs) {
      // A summary of /v1/jobs, as protojson writes it.
      const state = j.state || "", reasonName = j.reason || "", msg = j.reasonMessage || "", rate = num(j.rowsPerSecond);
      const tr = el("tr", { "data-job": j.name, "data-state": state });
      const name = el("td", { class: "name" });
      const a = el("a", { href: "#/job/" + encodeURIComponent(j.name) }, j.name);
      name.append(a);
      const reason = el("td", { class: "reason", title: msg }, reasonName + (state === "PAUSED" && msg ? ": " + msg : ""));
      tr.append(name, el("td", { class: "state" }, state), reason,
        el("td", { class: "health health-" + (j.health || "") }, j.health || "-"),
        el("td", { class: "num rate" }, rate < 0 ? "?" : rate.toFixed(1)),
        el("td", { class: "num lag" }, lagText(num(j.totalLag))),
        el("td", { class: "sink" }, j.sink || "-"));
      tb.append(tr);
    }
    $("#count").textContent = filterText ? matched + " of " + total + " jobs match" : total + " jobs";
    const pageNo = queried() ? Math.floor(offset / pageSize) + 1 : back.length + 1;
    $("#page").textContent = "page " + pageNo + " of " + Math.max(1, Math.ceil(matched / pageSize)) + " (" + matched + " jobs)";
    $("#prev").disabled = queried() ? offset === 0 : back.length === 0;
    $("#next").disabled = queried() ? !nextOffset : !nextAfter;
    document.querySelectorAll("#jobs th[data-key]").forEach((th) => {
      th.classList.toggle("sorted-asc", th.dataset.key === sortKey && sortDir > 0);
      th.classList.toggle("sorted-desc", th.dataset.key === sortKey && sortDir < 0);
    });
    // Ready once the list shows what was asked for (not while a typed
    // filter waits to be sent).
    if (filterTimer === null) document.body.dataset.listReady = "1";
  }

  async function loadList() {
    const q = new URLSearchParams({ limit: String(pageSize) });
    if (queried()) {
      if (sortKey) q.set("sort", sortKey);
      if (sortDir < 0) q.set("desc", "true");
      if (filterText) q.set("q", filterText);
      q.set("offset", String(offset));
    } else q.set("after", String(after));
    const seq = ++listSeq;
    try {
      const page = await api("/v1/jobs?" + q.toString());
      if (seq !== listSeq) return; // a newer request was sent meanwhile
      jobs = page.jobs || []; total = num(page.total); matched = num(page.matched);
      nextAfter = page.nextAfterId || 0; nextOffset = num(page.nextOffset);
      $("#status").textContent = "updated " + new Date().toLocaleTimeString();
      renderList();
    } catch (e) { if (seq === listSeq) $("#status").textContent = "error: " + e.message; }
  }

  // reload shows the first page of the list as now sorted and filtered.
  function reload() {
    after = 0; back = []; offset = 0;
    delete document.body.dataset.listReady;
    loadList();
  }

  // ------------------------------------------------------------ charts
  const colors = ["#2f6fdf", "#d9480f", "#2b8a3e", "#9c36b5", "#e67700", "#0c8599", "#c2255c", "#5c940d"];

  // chart draws series [{label, points: [[tMs, v], ...]}] as polylines
  // over the window [from, to].
  function chart(container, series, from, to, unit) {
    const W = 760, H = 200, L = 56, R = 110, T = 10, B = 24;
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("width", W); svg.setAttribute("height", H); svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
    let ymax = 0;
    for (const s of series) for (const p of s.points) ymax = Math.max(ymax, p[1]);
    if (ymax <= 0) ymax = 1;
    const x = (t) => L + ((t - from) / Math.max(to - from, 1)) * (W - L - R);
    const y = (v) => H - B - (v / ymax) * (H - T - B);
    const line = (x1, y1, x2, y2) => { const l = document.createElementNS(ns, "line"); l.setAttribute("x1", x1); l.setAttribute("y1", y1); l.setAttribute("x2", x2); l.setAttribute("y2", y2); l.setAttribute("class", "axis"); svg.append(l); };
    const text = (tx, ty, s, anchor) => { const e = document.createElementNS(ns, "text"); e.setAttribute("x", tx); e.setAttribute("y", ty); if (anchor) e.setAttribute("text-anchor", anchor); e.textContent = s; svg.append(e); };
    line(L, H - B, W - R, H - B); line(L, T, L, H - B);
    text(L - 4, T + 8, ymax.toFixed(ymax < 10 ? 1 : 0), "end"); text(L - 4, H - B, "0", "end");
    text(L, H - 6, "-" + Math.max(1, Math.round((to - from) / 60000)) + " min"); text(W - R, H - 6, "now", "end");
    series.forEach((s, i) => {
      const pl = document.createElementNS(ns, "polyline");
      pl.setAttribute("points", s.points.map((p) => x(p[0]).toFixed(1) + "," + y(p[1]).toFixed(1)).join(" "));
      pl.setAttribute("stroke", colors[i % colors.length]);
      pl.setAttribute("data-series", s.label);
      pl.setAttribute("data-points", String(s.points.length));
      svg.append(pl);
      const e = document.createElementNS(ns, "text");
      e.setAttribute("x", W - R + 6); e.setAttribute("y", T + 12 + i * 14); e.setAttribute("fill", colors[i % colors.length]);
      e.textContent = s.label; svg.append(e);
    });
    if (!series.length || !series.some((s) => s.points.length)) text(W / 2, H / 2, "no samples yet", "middle");
    container.replaceChildren(svg);
    if (unit) container.title = unit;
  }

  // ------------------------------------------------------------ job page
  let current = "";
  async function loadJob(name) {
    let info, d;
    try {
      info = await api("/v1/jobs/" + encodeURIComponent(name));
      d = await api("/ui/api/timelines/" + encodeURIComponent((info.summary || {}).id || "0"));
    } catch (e) { $("#job-name").textContent = name + ": " + e.message; return; }
    const s = info.summary || {};
    $("#job-name").textContent = s.name;
    const facts = $("#job-facts");
    facts.replaceChildren();
    const fact = (k, v, cls) => { facts.append(el("dt", {}, k)); facts.append(el("dd", cls ? { class: cls } : {}, v)); };
    fact("State", (s.state || "") + (s.reason ? " (" + s.reason + (s.reasonMessage ? ": " + s.reasonMessage : "") + ")" : ""), "job-state");
    fact("Health", info.health || "-", "job-health health-" + (info.health || ""));
    // A sink the node could not read for this show (its database down or
    // not answering): the job is shown, the parts not read say why.
    const unreachable = info.errorRowsUnavailable || info.progressUnavailable;
    fact("Table", s.table || "-");
    fact("Sink", (info.sink || "-") + (unreachable ? " (unreachable)" : ""), unreachable ? "sink-unreachable" : "");
    fact("Source", s.source || "-");
    fact("Rows/s (1 min)", (info.rowsPerSecond || 0).toFixed(1));
    fact("Total lag", lagText(Number(info.totalLag === undefined ? 0 : info.totalLag)));
    const st = info.stats || {};
    if (info.progressUnavailable) {
      fact("Statistics", "unavailable: " + info.progressUnavailable, "progress-unavailable");
    } else {
      fact("Loaded rows", String(st.loadedRows || 0)); fact("Error rows", String(st.errorRows || 0));
      fact("Error window", (st.windowErrorRows || 0) + " error rows in " + (st.windowRows || 0) + " rows (window of " + (info.errorWindowSize || "?") + " rows)");
    }
    $("#pause").disabled = !(s.state === "RUNNING" || s.state === "NEED_SCHEDULE");
    $("#resume").disabled = s.state !== "PAUSED";
    $("#stop").disabled = s.state === "STOPPED" || s.state === "CANCELLED";

    // The window is the last hour, or less while the node has sampled
    // the job for less (from its first sample, at least 5 minutes).
    const tl = d.timeline || [], to = d.now_ms;
    const from = Math.max(to - d.span_ms, Math.min(tl.length ? tl[0].t : to, to - 5 * 60000));
    const parts = {};
    for (const p of tl) for (const k in p.lag || {}) { if (p.lag[k] >= 0) (parts[k] = parts[k] || []).push([p.t, p.lag[k]]); }
    chart($("#lag-chart"), Object.keys(parts).sort((a, b) => a - b).map((k) => ({ label: "partition " + k, points: parts[k] })), from, to, "records");
    chart($("#rate-chart"), [{ label: "rows/s", points: tl.map((p) => [p.t, p.rows_per_sec]) }], from, to, "rows/s");

    const hb = $("#history tbody");
    hb.replaceChildren();
    for (const t of (info.history || []).slice().reverse()) {
      const tr = el("tr");
      tr.append(el("td", {}, String(t.seq)), el("td", {}, fmtTime(t.timeUnixMs)), el("td", {}, t.from || "-"), el("td", {}, t.to || ""),
        el("td", {}, t.reason || ""), el("td", {}, t.message || ""));
      hb.append(tr);
    }
    const eb = $("#error-rows tbody");
    eb.replaceChildren();
    if (info.errorRowsUnavailable) {
      const tr = el("tr", { class: "error-rows-unavailable" });
      tr.append(el("td", { colspan: "5" }, "unavailable: " + info.errorRowsUnavailable));
      eb.append(tr);
    }
    for (const r of info.errorRows || []) {
      let raw = "";
      try { raw = atob(r.raw || ""); } catch (e) { raw = r.raw || ""; }
      const tr = el("tr");
      tr.append(el("td", {}, String(r.partition || 0)), el("td", {}, String(r.offset || 0)), el("td", {}, fmtTime(r.timeUnixMs)),
        el("td", {}, r.reason || ""), el("td", { class: "raw" }, raw));
      eb.append(tr);
    }
    document.body.dataset.jobReady = s.name;
  }

  async function act(action) {
    $("#action-result").textContent = "";
    try {
      const r = await api("/v1/jobs/" + encodeURIComponent(current) + "/" + action, { method: "POST" });
      $("#action-result").textContent = action + ": " + ((r.summary || {}).state || "");
    } catch (e) { $("#action-result").textContent = action + " failed: " + e.message; }
    loadJob(current);
  }

  // ------------------------------------------------------------ routing
  function route() {
    clearInterval(timer);
    const m = location.hash.match(/^#\/job\/(.+)$/);
    $("#list-view").hidden = !!m; $("#job-view").hidden = !m;
    delete document.body.dataset.jobReady;
    if (m) {
      current = decodeURIComponent(m[1]);
      loadJob(current);
      timer = setInterval(() => loadJob(current), 5000);
    } else {
      loadList();
      timer = setInterval(loadList, 5000);
    }
  }

  async function init() {
    const sess = await api("/ui/api/session");
    csrf = sess.csrf; bearer = sess.bearer;
    document.body.dataset.csrfReady = "1";
    $("#filter").addEventListener("input", () => {
      // Sent to the node once typing pauses for 250 ms.
      clearTimeout(filterTimer);
      delete document.body.dataset.listReady;
      filterTimer = setTimeout(() => { filterTimer = null; filterText = $("#filter").value.trim(); reload(); }, 250);
    });
    $("#next").addEventListener("click", () => {
      if (queried()) { if (nextOffset) offset = nextOffset; else return; }
      else if (nextAfter) { back.push(after); after = nextAfter; } else return;
      delete document.body.dataset.listReady; loadList();
    });
    $("#prev").addEventListener("click", () => {
      if (queried()) { if (offset > 0) offset = Math.max(0, offset - pageSize); else return; }
      else if (back.length) after = back.pop(); else return;
      delete document.body.dataset.listReady; loadList();
    });
    // A header sorts by its column, ascending, then descending, then back
    // to the id order.
    document.querySelectorAll("#jobs th[data-key]").forEach((th) => th.addEventListener("click", () => {
      if (sortKey !== th.dataset.key) { sortKey = th.dataset.key; sortDir = 1; }
      else if (sortDir > 0) sortDir = -1;
      else { sortKey = ""; sortDir = 1; }
      reload();
    }));
    $("#pause").addEventListener("click", () => act("pause"));
    $("#resume").addEventListener("click", () => act("resume"));
    $("#stop").addEventListener("click", () => { if (confirm("Stop job " + current + "? A stopped job cannot be resumed.")) act("stop"); });
    $("#logout").addEventListener("click", async () => {
      await api("/ui/logout", { method: "POST", headers: { "X-CSRF-Token": csrf } }).catch(() => {});
      location.href = "/ui/";
    });
    window.addEventListener("hashchange", route);
    route();
  }
  init();
})();
