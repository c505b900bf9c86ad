"use strict";
// The report's behaviour: sortable cell table, filtered and paginated episode
// table, and the drill-down. Every text from the data goes in with textContent.
(function () {
  const DATA = JSON.parse(document.getElementById("data").textContent);
  const R = DATA.rows;
  const DETAILS = DATA.details;
  const VERDICTS = ["faithful", "unfaithful_correct", "wrong", "no_answer", "error"];
  const PAGE = 50;
  const N = R.id.length;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else node.setAttribute(k, v);
    }
    for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return node;
  }

  // -- the cell table: sort by any column ------------------------------------
  for (const table of document.querySelectorAll("table.sortable")) {
    const heads = Array.from(table.tHead.rows[0].cells);
    heads.forEach((th, col) => {
      th.querySelector("button").addEventListener("click", () => {
        const asc = th.getAttribute("aria-sort") !== "ascending";
        heads.forEach((h) => h.setAttribute("aria-sort", "none"));
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        const num = th.dataset.type === "num";
        const body = table.tBodies[0];
        const rows = Array.from(body.rows);
        const key = (r) => (num ? parseFloat(r.cells[col].dataset.v) : r.cells[col].textContent);
        rows.sort((a, b) => {
          const x = key(a), y = key(b);
          const c = num ? x - y : String(x).localeCompare(String(y), undefined, { numeric: true });
          return asc ? c : -c;
        });
        body.append(...rows);
      });
    });
  }

  // -- labels of an episode ----------------------------------------------------
  const labelCounts = R.labels.map((s) =>
    s ? s.split(" ").map((p) => p.split(":").map(Number)) : []
  );
  const labelMask = labelCounts.map((pairs) => pairs.reduce((m, [k]) => m | (1 << k), 0));
  function labelText(i) {
    return labelCounts[i].map(([k, c]) => (c > 1 ? `${R.kinds[k]} ×${c}` : R.kinds[k])).join(", ");
  }
  function divergenceText(i) {
    const d = R.div[i];
    if (!d) return "—";
    const where = d[1] === null ? "the answer" : `step ${d[1]}${stepName(R.cell[i], d[1])}`;
    return `call ${d[0]} at ${where}: ${R.kinds[d[2]]}`;
  }
  // A declared workflow's step by its tool and output: " (late_penalty → late_days)".
  function stepName(cell, step) {
    const names = (R.step_names || [])[cell];
    const n = names && names[step - 1];
    if (!n || !n.length) return "";
    return ` (${n[0] === n[1] ? n[0] : `${n[0]} \u2192 ${n[1]}`})`;
  }

  // -- filters -------------------------------------------------------------------
  const filters = document.getElementById("filters");
  function select(name, label, options) {
    const s = el("select", { id: `filter-${name}`, name });
    s.append(el("option", { value: "", text: "all" }));
    options.forEach(([v, t]) => s.append(el("option", { value: String(v), text: t })));
    filters.append(el("label", { for: `filter-${name}` }, label, s));
    s.addEventListener("change", () => { page = 0; apply(); });
    return s;
  }
  const fVerdict = select("verdict", "verdict", VERDICTS.map((v, i) => [i, v]).filter(([i]) => R.verdict.includes(i)));
  const fLabel = select("label", "has label", R.kinds.map((k, i) => [i, k]).concat([["none", "no label"]]));
  const fCell = select("cell", "cell", R.cell_names.map((c, i) => [i, c]));
  const fSeries = select("series", "series", R.series_names.map((s, i) => [i, s]));
  const fText = el("input", { id: "filter-id", type: "search", placeholder: "episode id contains" });
  filters.append(el("label", { for: "filter-id" }, "episode", fText));
  fText.addEventListener("input", () => { page = 0; apply(); });

  let page = 0;
  let shown = [];
  function apply() {
    const v = fVerdict.value, l = fLabel.value, c = fCell.value, s = fSeries.value;
    const t = fText.value.trim();
    shown = [];
    for (let i = 0; i < N; i++) {
      if (v !== "" && R.verdict[i] !== +v) continue;
      if (l === "none" ? labelMask[i] !== 0 : l !== "" && !(labelMask[i] & (1 << +l))) continue;
      if (c !== "" && R.cell[i] !== +c) continue;
      if (s !== "" && R.series[i] !== +s) continue;
      if (t && !R.id[i].includes(t)) continue;
      shown.push(i);
    }
    draw();
  }

  const tbody = document.querySelector("#episode-table tbody");
  const pager = document.getElementById("pager");
  const count = document.getElementById("count");
  function draw() {
    const pages = Math.max(1, Math.ceil(shown.length / PAGE));
    page = Math.min(page, pages - 1);
    const rows = shown.slice(page * PAGE, (page + 1) * PAGE).map((i) => {
      const open = el("a", { class: "open", href: `#${R.anchor[i]}`, "data-episode": String(i), text: R.id[i] });
      open.addEventListener("click", (e) => { e.preventDefault(); location.hash = R.anchor[i]; drill(i); });
      const verdict = VERDICTS[R.verdict[i]] + (R.error[i] ? ` (${R.error[i]})` : "");
      return el("tr", { "data-index": String(i) },
        el("td", {}, open),
        el("td", { text: R.series_names[R.series[i]] }),
        el("td", { text: R.cell_names[R.cell[i]] }),
        el("td", {}, el("span", { class: `verdict v-${VERDICTS[R.verdict[i]]}`, text: verdict })),
        el("td", { text: divergenceText(i) }),
        el("td", { text: labelText(i) || "—" }));
    });
    tbody.replaceChildren(...rows);
    count.textContent = `${shown.length} of ${N} episodes match; page ${page + 1} of ${pages}`;
    const prev = el("button", { type: "button", id: "prev", text: "← previous" });
    const next = el("button", { type: "button", id: "next", text: "next →" });
    prev.disabled = page === 0;
    next.disabled = page >= pages - 1;
    prev.addEventListener("click", () => { page--; draw(); });
    next.addEventListener("click", () => { page++; draw(); });
    pager.replaceChildren(prev, el("span", { text: `page ${page + 1} of ${pages}` }), next);
  }

  // -- drill-down ----------------------------------------------------------------
  const drillBox = document.getElementById("drill");
  function labelChips(list) {
    return list.map(([k, text]) => el("span", { class: `lab k${k}`, text }));
  }
  function table(headers, rows, cls) {
    return el("div", { class: "scroll" }, el("table", { class: cls || "" },
      el("thead", {}, el("tr", {}, ...headers.map((h) => el("th", { scope: "col", text: h })))),
      el("tbody", {}, ...rows)));
  }
  // A row of the call table: a step's expected call beside the call that ran it
  // (empty when none did), or a further call of a step, or a call that runs no step.
  function callRow(d, [step, expected, c, chips], marked) {
    const call = c === null ? ["", "", "", []] : d.calls[c];
    const kind = c === null ? "unrun" : expected === "" ? "extra" : "";
    return el("tr", { class: `${kind}${marked ? " divergence" : ""}`, "data-call": c === null ? "" : String(c) },
      el("td", { text: step + (marked ? " (first divergence)" : "") }),
      el("td", { class: "mono", text: expected }),
      el("td", { text: c === null ? "" : String(c) }),
      el("td", { class: "mono", text: call[0] }),
      el("td", { class: "mono", text: call[1] }),
      el("td", { class: "mono", text: call[2] }),
      el("td", {}, ...labelChips(call[3].concat(chips))));
  }
  function drill(i) {
    const d = DETAILS[String(i)];
    const verdict = VERDICTS[R.verdict[i]];
    const parts = [
      el("h2", { id: "drill-title", tabindex: "-1" }, `Episode ${R.id[i]} `,
        el("a", { href: `#${R.anchor[i]}`, class: "permalink", title: "link to this episode", text: "#" })),
      el("p", {}, `${R.series_names[R.series[i]]} · ${R.cell_names[R.cell[i]]} · `,
        el("span", { class: `verdict v-${verdict}`, text: verdict }),
        ` · first divergence: ${divergenceText(i)}`),
    ];
    if (!d) {
      parts.push(el("p", { class: "hint", text:
        "The drill-down of this episode is not embedded (the report keeps its size bounded). " +
        `Show it with: agentproc replay ${R.run_names[R.run[i]]} --episode ${R.id[i]}` }));
    } else {
      parts.push(el("h3", { text: "Procedure" }));
      if (d.unavailable) {
        parts.push(el("p", { class: "warnings", text: `The procedure is not at hand: ${d.unavailable}` }));
      } else {
        const inputs = Object.entries(d.inputs).map(([k, v]) => `${k} = ${v}`).join(", ");
        parts.push(el("p", { class: "mono", text: `Inputs: ${inputs}` }));
        parts.push(el("ol", { class: "mono procedure" }, ...d.steps.map(([text, live]) =>
          el("li", { class: live ? "" : "dead" }, text, live ? "" : " (dead step: its output never reaches the answer)"))));
        parts.push(el("p", { class: "mono", text: `Answer: ${d.answer_variable} = ${d.answer}` }));
      }
      const m = d.metrics;
      parts.push(el("p", { text: `first answer ${m.first_answer ?? "none"}, final answer ${m.final_answer ?? "none"}; ` +
        `steps executed ${m.executed_steps}/${m.total_steps}; stop: ${d.stop}` }));
      if (d.error) parts.push(el("p", { class: "warnings", text: `infrastructure failure, not scored: ${d.error}` }));
      if (d.calls.length) {
        parts.push(el("h3", { text: "Calls" }));
        parts.push(table(["step", "expected call", "#", "actual call", "arguments", "result", "labels"],
          d.rows.map((row, k) => callRow(d, row, k === d.mark)), "timeline"));
      }
      if (typeof d.output === "string") {
        parts.push(el("h3", { text: "Model output (text mode)" }), el("pre", { text: d.output }));
        parts.push(el("p", {}, ...labelChips(d.text_labels.map(([line, k, t]) => [k, `parsed line ${line}: ${t}`]))));
      }
      if (d.episode_labels.length) parts.push(el("p", {}, "Episode: ", ...labelChips(d.episode_labels)));
      if (d.turns.length) {
        parts.push(el("h3", { text: "Model turns" }));
        const rows = d.turns.map(([text, tools, inTok, outTok, secs], t) => el("tr", {},
          el("td", { text: String(t) }),
          el("td", {}, el("pre", { text: text || "—" })),
          el("td", { class: "mono", text: tools.join("\n") || "—" }),
          el("td", { text: inTok == null ? "—" : `${inTok} in / ${outTok} out` }),
          el("td", { text: secs == null ? "—" : `${Number(secs).toFixed(2)} s` })));
        parts.push(table(["turn", "what the model wrote", "tool calls", "tokens", "latency"], rows, "turns"));
      }
    }
    drillBox.replaceChildren(el("article", { id: R.anchor[i], class: "episode" }, ...parts));
    drillBox.hidden = false;
    document.getElementById("drill-title").focus();
  }

  // -- each episode by its anchor (#ep-...): a link opens its drill-down -------------
  const AT = new Map(R.anchor.map((a, i) => [a, i]));
  function follow() {
    const i = AT.get(decodeURIComponent(location.hash.slice(1)));
    if (i !== undefined && !document.getElementById(R.anchor[i])) drill(i);
  }
  window.addEventListener("hashchange", follow);
  apply();
  follow();
})();
