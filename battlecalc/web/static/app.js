// battlecalc's page: a form built from /api/spec, results from /api/run, charts in SVG.
// No framework, no build step, nothing fetched but this server's own API.
"use strict";

(() => {
  const DEBOUNCE_MS = 120;
  const SVG = "http://www.w3.org/2000/svg";
  const $ = (selector) => document.querySelector(selector);

  let spec = null;
  const state = { rules: "", kind: "", armies: {}, raw: {}, options: {} };
  let timer = null;
  let inflight = null;
  let lastQuery = null;

  // ------------------------------------------------------------------ small DOM helpers

  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "text") node.textContent = value;
      else if (key === "class") node.className = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : value);
    }
    node.append(...children.filter((c) => c !== null && c !== undefined));
    return node;
  }

  function svg(tag, attrs = {}, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  const pct = (p) => (100 * p).toFixed(2) + "%";
  const fixed = (x, digits = 3) => x.toFixed(digits);
  const signed = (x, digits = 3) => (x >= 0 ? "+" : "") + x.toFixed(digits);

  // ------------------------------------------------------------------ spec lookups

  const edition = () => spec.editions.find((e) => e.id === state.rules);
  const kind = () => spec.kinds.find((k) => k.id === state.kind);
  const kindsOf = (ed) => spec.kinds.filter((k) => k.models.includes(ed.model) && ed.roles[k.id]);
  const optionDefault = (opt) => (opt.kind === "bool" ? false : String(opt.default ?? ""));

  function applies(opt) {
    const when = opt.when || {};
    const method = state.options.method ?? "auto";
    if (when.models && !when.models.includes(edition().model)) return false;
    if (when.kinds && !when.kinds.includes(state.kind)) return false;
    if (when.methods && !when.methods.includes(method)) return false;
    if (opt.kind === "techs" && edition().techs.length === 0) return false;
    return true;
  }

  // ------------------------------------------------------------------ army notation

  function formatArmy(counts) {
    return edition().units.filter((u) => counts[u.name] > 0)
      .map((u) => `${counts[u.name]} ${u.name}`).join(", ");
  }

  // "3 inf, 1 art" -> {infantry: 3, artillery: 1}; null when a name is not the edition's
  function parseArmy(text) {
    const aliases = edition().aliases;
    const counts = {};
    const entry = /([+-]?\d+)?\s*([^\s\d,+-][^\s\d,]*)/gu;
    for (const match of text.matchAll(entry)) {
      const name = match[2].toLowerCase().replace(/-/g, "_");
      const canonical = aliases[name] ?? (name.endsWith("s") ? aliases[name.slice(0, -1)] : undefined);
      const count = match[1] === undefined ? 1 : parseInt(match[1], 10);
      if (!canonical || !(count > 0)) return null;
      counts[canonical] = (counts[canonical] || 0) + count;
    }
    return counts;
  }

  function armyText(role) {
    if (state.raw[role] !== undefined) return state.raw[role];
    return formatArmy(state.armies[role] || {});
  }

  // ------------------------------------------------------------------ URL <-> state

  function readQuery(search) {
    const query = new URLSearchParams(search);
    const ids = spec.editions.map((e) => e.id);
    state.rules = ids.includes(query.get("rules")) ? query.get("rules")
      : (ids.includes("1942-2e") ? "1942-2e" : ids[0]);
    const kinds = kindsOf(edition()).map((k) => k.id);
    const truthy = (v) => ["1", "true", "yes", "on"].includes((v || "").toLowerCase());
    let wanted = query.get("kind");
    if (!kinds.includes(wanted)) {
      if (truthy(query.get("sea"))) wanted = "sea";
      else if (query.get("landing") || query.get("bombard")) wanted = "amphibious";
      else wanted = kinds[0];
    }
    state.kind = kinds.includes(wanted) ? wanted : kinds[0];
    state.armies = {};
    state.raw = {};
    for (const role of Object.keys(spec.army_labels)) {
      const text = query.get(role);
      if (!text) continue;
      const counts = parseArmy(text);
      if (counts) state.armies[role] = counts;
      else state.raw[role] = text;
    }
    state.options = {};
    for (const opt of spec.options) {
      if (!query.has(opt.name)) state.options[opt.name] = optionDefault(opt);
      else if (opt.kind === "bool") state.options[opt.name] = truthy(query.get(opt.name));
      else state.options[opt.name] = query.get(opt.name);
    }
  }

  // the edition, the kind's own parameters and the armies; withKind: name the kind too
  function battleParams(withKind) {
    const params = new URLSearchParams();
    params.set("rules", state.rules);
    if (withKind) params.set("kind", state.kind);
    for (const [key, value] of Object.entries(kind().params)) {
      params.set(key, value === true ? "1" : String(value));
    }
    for (const role of kind().armies) {
      const text = armyText(role);
      if (text) params.set(role, text);
    }
    return params;
  }

  // the request: every army of the kind and every option that shows and is not at its default
  function apiParams() {
    const params = battleParams(false);
    for (const opt of spec.options) {
      if (!applies(opt)) continue;
      const value = state.options[opt.name];
      // a form default is simulate's default too, except where the spec says it is not
      if (value === optionDefault(opt) && !opt.send_default) continue;
      if (value === true) params.set(opt.name, "1");
      else if (value !== false && value !== "" && value !== undefined) params.set(opt.name, value);
    }
    return params;
  }

  // the page's URL: the battle, with options at their defaults left out
  function pageQuery() {
    const derived = state.kind === "amphibious" || kindsOf(edition())[0].id !== state.kind;
    const params = battleParams(derived);
    for (const opt of spec.options) {
      if (!applies(opt)) continue;
      const value = state.options[opt.name];
      if (value === optionDefault(opt)) continue;
      params.set(opt.name, value === true ? "1" : value === false ? "0" : value);
    }
    return params;
  }

  // ------------------------------------------------------------------ the form

  function buildForm() {
    const select = $("#rules");
    select.replaceChildren(...spec.editions.map((e) =>
      el("option", { value: e.id, text: `${e.name} (${e.id})`, selected: e.id === state.rules })));
    $("#edition-description").textContent = edition().description || "";
    $("#kinds").replaceChildren(...kindsOf(edition()).map((k) => el("label", {},
      el("input", { type: "radio", name: "kind", value: k.id, checked: k.id === state.kind,
                    onchange: () => { state.kind = k.id; buildForm(); changed(); } }),
      " " + k.label)));
    buildArmies();
    buildOptions();
  }

  function unitLabel(unit) {
    const stats = edition().model === "dice" ? ` ${unit.attack}/${unit.defense}, ${unit.cost} IPC` : "";
    return el("span", { class: "name" }, unit.name.replace(/_/g, " "), el("small", { text: stats }));
  }

  function buildArmies() {
    const ed = edition();
    const boxes = kind().armies.map((role) => {
      const names = ed.roles[state.kind][role] || [];
      const counts = state.armies[role] || (state.armies[role] = {});
      const notation = el("div", { class: "notation", id: `notation-${role}` });
      const showNotation = () => {
        notation.textContent = state.raw[role] !== undefined
          ? `"${state.raw[role]}" (not read: edit the counts)` : (formatArmy(counts) || "nobody");
      };
      const rows = names.map((name) => {
        const unit = ed.units.find((u) => u.name === name);
        const input = el("input", { type: "number", min: "0", max: "1000", step: "1",
                                    value: String(counts[name] || 0), id: `army-${role}-${name}`,
                                    "aria-label": `${role} ${name}` });
        const set = (n) => {
          n = Math.max(0, Math.min(1000, Number.isFinite(n) ? Math.trunc(n) : 0));
          if (n) counts[name] = n; else delete counts[name];
          input.value = String(n);
          input.classList.toggle("nonzero", n > 0);
          delete state.raw[role];
          showNotation();
          changed();
        };
        input.classList.toggle("nonzero", (counts[name] || 0) > 0);
        input.addEventListener("input", () => {
          if (input.value === "") return;  // mid-edit; wait for a number
          set(parseInt(input.value, 10));
        });
        const minus = el("button", { type: "button", text: "\u2212", "aria-label": `fewer ${name}`,
                                     onclick: () => set((counts[name] || 0) - 1) });
        const plus = el("button", { type: "button", text: "+", "aria-label": `more ${name}`,
                                    onclick: () => set((counts[name] || 0) + 1) });
        return el("div", { class: "unit" }, unitLabel(unit),
          el("span", { class: "stepper" }, minus, input, plus));
      });
      showNotation();
      return el("fieldset", { class: role, id: `army-${role}` },
        el("legend", { text: spec.army_labels[role] || role }), ...rows, notation);
    });
    $("#armies").replaceChildren(...boxes);
  }

  function optionControl(opt) {
    const value = state.options[opt.name];
    const id = `opt-${opt.name}`;
    const set = (v) => { state.options[opt.name] = v; if (opt.name === "method") showOptions(); changed(); };
    if (opt.kind === "bool") {
      return el("label", { class: "option bool", "data-option": opt.name },
        el("input", { type: "checkbox", id, name: opt.name, checked: value === true,
                      onchange: (e) => set(e.target.checked) }), " " + opt.label);
    }
    let control;
    if (opt.kind === "choice") {
      control = el("select", { id, name: opt.name, onchange: (e) => set(e.target.value) },
        ...opt.choices.map((c) => el("option", { value: c, text: c === "" ? "(default)" : c,
                                                 selected: c === value })));
    } else if (opt.kind === "techs") {
      const chosen = new Set(String(value || "").split(",").map((t) => t.trim()).filter(Boolean));
      const boxes = edition().techs.map((t) => el("label", { title: t.description },
        el("input", { type: "checkbox", value: t.name, checked: chosen.has(t.name),
                      id: `${id}-${t.name}`,
                      onchange: (e) => {
                        if (e.target.checked) chosen.add(t.name); else chosen.delete(t.name);
                        set(edition().techs.map((x) => x.name).filter((n) => chosen.has(n)).join(","));
                      } }), " " + t.name.replace(/_/g, " ")));
      return el("div", { class: "option techs", "data-option": opt.name },
        el("span", { text: opt.label }), el("div", {}, ...boxes));
    } else {
      const numeric = opt.kind === "int" || opt.kind === "float";
      const list = opt.suggestions ? `${id}-list` : undefined;
      control = el("input", {
        id, name: opt.name, type: numeric ? "number" : "text", value: value ?? "",
        min: opt.min, max: opt.max, step: opt.step ?? (opt.kind === "float" ? "any" : undefined),
        list, placeholder: opt.kind === "trials" ? "1e6" : undefined,
        oninput: (e) => set(e.target.value.trim()),
      });
      if (list) {
        control = el("span", {}, control,
          el("datalist", { id: list }, ...opt.suggestions.map((s) => el("option", { value: s }))));
      }
    }
    return el("label", { class: "option", "data-option": opt.name, title: opt.help || "" },
      el("span", { text: opt.label }), control,
      opt.help ? el("span", { class: "help", text: opt.help }) : null);
  }

  function buildOptions() {
    const groups = new Map();
    for (const opt of spec.options) {
      if (!groups.has(opt.group)) groups.set(opt.group, []);
      groups.get(opt.group).push(optionControl(opt));
    }
    $("#options").replaceChildren(...[...groups].map(([name, controls]) =>
      el("fieldset", { "data-group": name }, el("legend", { text: name }), ...controls)));
    showOptions();
  }

  function showOptions() {
    for (const opt of spec.options) {
      const node = document.querySelector(`[data-option="${opt.name}"]`);
      if (node) node.hidden = !applies(opt);
    }
    for (const box of document.querySelectorAll("#options fieldset")) {
      box.hidden = [...box.querySelectorAll("[data-option]")].every((n) => n.hidden);
    }
  }

  // ------------------------------------------------------------------ requests

  function changed() {
    const query = pageQuery().toString();
    const url = `${location.pathname}?${query}`;
    history.replaceState(null, "", url);
    $("#share").href = url;
    $("#cli").textContent = cliLine(apiParams());
    document.body.dataset.state = "pending";
    clearTimeout(timer);
    timer = setTimeout(run, DEBOUNCE_MS);
  }

  async function run() {
    timer = null;
    const params = apiParams();
    const query = params.toString();
    if (query === lastQuery) {
      if (!inflight) document.body.dataset.state = "idle";
      return;
    }
    if (inflight) inflight.abort();
    const controller = new AbortController();
    inflight = controller;
    const started = performance.now();
    $("#results").classList.add("busy");
    $("#status").textContent = "computing\u2026";
    try {
      const response = await fetch(`${kind().endpoint}?${query}&distributions=1`,
                                   { signal: controller.signal, cache: "no-store" });
      const data = await response.json();
      if (controller !== inflight) return;
      const ms = Math.round(performance.now() - started);
      if (!response.ok) {
        showError(data.error ? pageMessage(data.error) : `HTTP ${response.status}`);
        $("#status").textContent = `error (${ms} ms)`;
        document.body.dataset.state = timer === null ? "error" : "pending";
      } else {
        lastQuery = query;
        render(data, ms);
        $("#status").textContent = `answered in ${ms} ms`;
        // "idle" only when no newer change waits for its request
        document.body.dataset.state = timer === null ? "idle" : "pending";
      }
    } catch (error) {
      if (error.name === "AbortError") return;
      showError(`no answer from the server (${error.message})`);
      $("#status").textContent = "offline?";
      document.body.dataset.state = "error";
    } finally {
      if (controller === inflight) {
        inflight = null;
        $("#results").classList.remove("busy");
      }
    }
  }

  // the API names a parameter by its keyword (keep_land); the page by the field's label.
  // Keywords with an underscore anywhere, one-word ones where a message names them
  // ("counter must be ...", as battlecalc.options.flag_message does for flags)
  function pageMessage(message, options = spec.options) {
    let text = message;
    for (const opt of options) {
      if (!opt.label || opt.label === opt.name) continue;
      const after = opt.name.includes("_") ? "(?![\\w-])" : "(?=\\s+must\\b|:)";
      const label = opt.label.includes(" ") ? `"${opt.label}"` : `"${opt.label}" (${opt.group})`;
      text = text.replace(new RegExp(`(^|[^\\w-])${opt.name}${after}`, "g"), `$1${label}`);
    }
    return text;
  }

  function showError(message) {
    lastQuery = null;
    const box = $("#error");
    box.textContent = message;
    box.hidden = false;
    $("#results").classList.add("stale");
  }

  // the "same numbers" command line: each parameter as its flag (spec.flags, from the table of
  // options), a flag alone for a boolean, choices in the command line's spelling (low-luck)
  function cliLine(params, flags = spec.flags, options = spec.options) {
    const quote = (s) => (/^[\w.,:+-]+$/.test(s) ? s : `"${s.replace(/(["\\$`])/g, "\\$1")}"`);
    const words = ["battlecalc", "run"];
    for (const [key, value] of params) {
      const flag = flags[key];
      if (!flag) continue;  // rounds_distribution: --format csv --distribution rounds
      const option = options.find((o) => o.name === key);
      if (key === "sea" || (option && option.kind === "bool")) words.push(flag);
      else if (option && option.kind === "choice") words.push(flag, quote(value.replace(/_/g, "-")));
      else words.push(flag, quote(value));
    }
    return words.join(" ");
  }

  // ------------------------------------------------------------------ results

  function render(data, ms) {
    $("#error").hidden = true;
    $("#results").classList.remove("stale");
    const exact = data.method === "exact";
    const how = exact ? "exact" : `Monte Carlo, ${data.trials.toLocaleString("en")} trials, seed ${data.seed}`;
    $("#summary").replaceChildren(
      el("strong", { text: `${data.rules}: ` }), `${data.attacker}  attacking  ${data.defender}`,
      el("br"), el("span", { class: "method", id: "method", "data-value": data.method,
        text: `method: ${how} \u2014 solved in ${(1000 * data.elapsed_s).toFixed(1)} ms, answered in ${ms} ms` }));
    renderOutcomes(data, exact);
    renderNumbers(data, exact);
    renderSurvivors(data);
    renderStates(data.distributions);
    renderCharts(data);
  }

  function renderOutcomes(data, exact) {
    const rows = [];
    const retreating = Object.keys(data).some((k) => k.startsWith("retreat_") && data[k]) ||
      data.strafe !== null && data.strafe !== undefined;
    for (const [key, label] of spec.outcomes) {
      if (typeof data[key] !== "number") continue;
      if (key === "retreat" && data[key] === 0 && !retreating) continue;
      if (key === "takes_territory" && data.sea) continue;
      const p = data[key];
      const bar = el("div", { class: "bar" });
      const fill = el("div", { class: `fill ${key}` });
      fill.style.width = `${100 * p}%`;
      bar.append(fill);
      const ci = data.ci95 && data.ci95[key];
      let ciText = "";
      if (!exact && ci) {
        const whisker = el("div", { class: "whisker" });
        whisker.style.left = `${100 * ci[0]}%`;
        whisker.style.width = `${Math.max(0.3, 100 * (ci[1] - ci[0]))}%`;
        bar.append(whisker);
        ciText = `[${pct(ci[0])}, ${pct(ci[1])}]`;
      }
      rows.push(el("tr", { "data-key": key, "data-value": String(p) },
        el("td", { class: "label", text: label }), el("td", {}, bar),
        el("td", { class: "value", text: pct(p) }), el("td", { class: "ci", text: ciText })));
    }
    $("#outcomes").replaceChildren(...rows);
  }

  function renderNumbers(data, exact) {
    const items = [];
    const shown = new Set();
    const add = (key, label, text) => {
      shown.add(key);
      items.push(el("dt", { text: label }),
        el("dd", { "data-key": key, "data-value": String(data[key]), text }));
    };
    for (const [key, label] of spec.numbers) {
      if (typeof data[key] !== "number") continue;
      const se = !exact && data.stderr && data.stderr[key];
      const plusMinus = se ? ` \u00b1 ${fixed(1.959963984540054 * se)}` : "";
      add(key, label, (key === "tuv_swing" ? signed(data[key]) : fixed(data[key])) + plusMinus);
    }
    if (data.pruned) add("pruned", "pruned probability", data.pruned.toExponential(2));
    // result fields this page does not know yet (planner fields, raids, ...) still show
    const known = new Set([...spec.outcomes.map((o) => o[0]), ...spec.options.map((o) => o.name),
      ...Object.keys(spec.army_labels), "rules", "method", "trials", "seed", "sea",
      "elapsed_s", "pruned", "stderr", "ci95", "distributions"]);
    const short = (v) => Number(v.toPrecision(6)).toString();
    for (const [key, value] of Object.entries(data)) {
      if (shown.has(key) || known.has(key) || key.endsWith("_survivors")) continue;
      if (key.endsWith("_distribution")) continue;  // drawn as charts
      if (typeof value === "number") add(key, key.replace(/_/g, " "), short(value));
      // {name: number} fields (percentiles, "keeps at least N", ...): one line each
      const entries = value && typeof value === "object" && !Array.isArray(value)
        ? Object.entries(value) : [];
      if (entries.length && entries.every(([, v]) => typeof v === "number")) {
        shown.add(key);
        items.push(el("dt", { text: key.replace(/_/g, " ") }), el("dd", { "data-key": key,
          text: entries.map(([k, v]) => `${k.replace(/_/g, " ")}: ${short(v)}`).join(", ") }));
      }
    }
    $("#numbers").replaceChildren(...items);
  }

  function renderSurvivors(data) {
    const a = data.attacker_survivors || {};
    const d = data.defender_survivors || {};
    const names = [...new Set([...Object.keys(a), ...Object.keys(d)])];
    const cell = (side, map, name) => (name in map
      ? el("td", { "data-key": `${side}_survivors.${name}`, "data-value": String(map[name]), text: fixed(map[name]) })
      : el("td", { text: "\u2013" }));
    $("#survivors").replaceChildren(
      el("tr", {}, el("th", { text: "unit" }), el("th", { text: "attacker" }), el("th", { text: "defender" })),
      ...names.map((n) => el("tr", {}, el("td", { text: n.replace(/_/g, " ") }),
        cell("attacker", a, n), cell("defender", d, n))));
  }

  function renderStates(laws) {
    const blocks = [];
    for (const side of ["attacker", "defender"]) {
      const top = (laws && laws[side] && laws[side].top) || [];
      if (!top.length) continue;
      blocks.push(el("h3", { class: side, text: side }), el("ol", {}, ...top.map((s) =>
        el("li", {}, el("span", { class: "p", text: pct(s.probability) }),
          `${s.survivors === "nothing" ? "nothing left" : s.survivors}`))));
    }
    $("#states").replaceChildren(...blocks);
  }

  function renderCharts(data) {
    const laws = data.distributions || {};
    const labels = laws.labels || { ipc_lost: "IPC lost", rounds: "rounds" };
    const a = laws.attacker || {};
    const d = laws.defender || {};
    const exact = data.method === "exact";
    const charts = [];
    if (a.units_left || d.units_left) {
      charts.push(chart("Attacker survivors", [{ name: "attacker", color: "attacker", pairs: a.units_left }], "units left"));
      charts.push(chart("Defender survivors", [{ name: "defender", color: "defender", pairs: d.units_left }], "units left"));
    }
    charts.push(chart(labels.ipc_lost === "IPC lost" ? "IPC lost" : labels.ipc_lost,
      [{ name: "attacker", color: "attacker", pairs: a.ipc_lost }, { name: "defender", color: "defender", pairs: d.ipc_lost }],
      labels.ipc_lost));
    if ("tuv_swing" in data) {
      charts.push(chart("TUV swing", [{ name: "swing", color: "swing", pairs: laws.tuv_swing }],
        "TUV swing (positive favours the attacker)",
        `not available for this battle (mean ${signed(data.tuv_swing)})`));
    }
    charts.push(chart(labels.rounds === "rounds" ? "Rounds" : "Exchanges",
      [{ name: labels.rounds, color: "rounds", pairs: laws.rounds }], labels.rounds,
      "the law of rounds: Monte Carlo, or tick \u201claw of rounds (exact)\u201d"));
    $("#charts").replaceChildren(...charts);
  }

  // ------------------------------------------------------------------ SVG bar charts

  const COLORS = { attacker: "#c0392b", defender: "#2e6da4", swing: "#8e44ad", rounds: "#27ae60" };

  function niceStep(span, count) {
    const raw = span / Math.max(1, count);
    const power = 10 ** Math.floor(Math.log10(raw || 1));
    for (const m of [1, 2, 5, 10]) if (m * power >= raw) return m * power;
    return 10 * power;
  }

  // drop the tails that hold almost nothing, so that the bulk is readable
  function trimmed(pairs) {
    if (pairs.length <= 12) return pairs;
    let lo = 0;
    let hi = pairs.length - 1;
    while (lo < hi && pairs[lo][1] < 1e-4) lo++;
    while (hi > lo && pairs[hi][1] < 1e-4) hi--;
    return pairs.slice(lo, hi + 1);
  }

  function binned(pairs, step, origin) {
    const bins = new Map();
    for (const [x, p] of pairs) {
      const b = origin + Math.floor((x - origin) / step) * step;
      bins.set(b, (bins.get(b) || 0) + p);
    }
    return [...bins].sort((u, v) => u[0] - v[0]);
  }

  function chart(title, series, xLabel, emptyText = "no data") {
    const box = el("div", { class: "chart", "data-chart": title },
      el("h3", { text: title }));
    series = series.filter((s) => s.pairs && s.pairs.length).map((s) => ({ ...s, pairs: trimmed(s.pairs) }));
    if (!series.length) {
      box.append(el("div", { class: "empty", text: emptyText }));
      return box;
    }
    const W = 340, H = 170, L = 38, R = 8, T = 8, B = 30;
    const xs = series.flatMap((s) => s.pairs.map((p) => p[0]));
    let xmin = Math.min(...xs);
    const xmax = Math.max(...xs);
    let step = 1;
    const distinct = [...new Set(xs)].sort((u, v) => u - v);
    if (distinct.length > 60) {
      step = niceStep(xmax - xmin, 40);
      xmin = Math.floor(xmin / step) * step;
      series = series.map((s) => ({ ...s, pairs: binned(s.pairs, step, xmin) }));
    } else if (distinct.length > 1) {
      step = Math.min(...distinct.slice(1).map((x, i) => x - distinct[i]));
      step = Math.max(step, (xmax - xmin) / 60);
    }
    const span = xmax - xmin + step;
    const ymax = Math.max(...series.flatMap((s) => s.pairs.map((p) => p[1]))) * 1.08 || 1;
    const plotW = W - L - R, plotH = H - T - B;
    const x = (v) => L + ((v - xmin + step / 2) / span) * plotW;
    const y = (p) => T + plotH - (p / ymax) * plotH;
    const group = Math.min(48, (plotW * step / span) * 0.85);
    const barW = Math.max(1, group / series.length);
    const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": title });
    series.forEach((s, i) => {
      for (const [v, p] of s.pairs) {
        const rect = svg("rect", { x: x(v) - group / 2 + i * barW, y: y(p), width: barW,
                                   height: Math.max(0, T + plotH - y(p)), fill: COLORS[s.color] || "#7f8c8d" });
        const range = step > 1 && distinct.length > 60 ? `${v} to ${v + step}` : `${v}`;
        rect.append(svg("title", {}, `${s.name} ${range}: ${pct(p)}`));
        root.append(rect);
      }
    });
    root.append(svg("line", { class: "axis", x1: L, x2: W - R, y1: T + plotH, y2: T + plotH }));
    root.append(svg("line", { class: "axis", x1: L, x2: L, y1: T, y2: T + plotH }));
    const integral = xs.every(Number.isInteger);
    const xStep = integral ? Math.max(1, niceStep(xmax - xmin || 1, 6)) : niceStep(xmax - xmin || 1, 6);
    for (let v = Math.ceil(xmin / xStep) * xStep; v <= xmax + 1e-9; v += xStep) {
      root.append(svg("text", { x: x(v), y: T + plotH + 12, "text-anchor": "middle" }, String(Number(v.toPrecision(6)))));
    }
    const yStep = niceStep(ymax, 4);
    for (let p = 0; p <= ymax + 1e-12; p += yStep) {
      root.append(svg("text", { x: L - 4, y: y(p) + 3, "text-anchor": "end" }, `${Number((100 * p).toPrecision(4))}%`));
    }
    root.append(svg("text", { x: L + plotW / 2, y: H - 4, "text-anchor": "middle" }, xLabel));
    box.append(root);
    if (series.length > 1) {
      box.append(el("div", { class: "legend" }, ...series.flatMap((s) =>
        [el("span", { class: s.color, text: `\u25a0 ${s.name}` }), " "])));
    }
    return box;
  }

  // ------------------------------------------------------------------ start

  async function start() {
    const response = await fetch("/api/spec", { cache: "no-store" });
    spec = await response.json();
    readQuery(location.search);
    buildForm();
    $("#rules").addEventListener("change", (e) => {
      const previous = state.armies;
      state.rules = e.target.value;
      const kinds = kindsOf(edition()).map((k) => k.id);
      if (!kinds.includes(state.kind)) state.kind = kinds[0];
      // keep the units the new edition also has
      const names = new Set(edition().units.map((u) => u.name));
      state.armies = {};
      for (const [role, counts] of Object.entries(previous)) {
        state.armies[role] = Object.fromEntries(Object.entries(counts).filter(([n]) => names.has(n)));
      }
      state.raw = {};
      state.options.attacker_tech = "";
      state.options.defender_tech = "";
      buildForm();
      changed();
    });
    $("#clear").addEventListener("click", () => {
      state.armies = {};
      state.raw = {};
      buildArmies();
      changed();
    });
    changed();
  }

  start().catch((error) => showError(`the page could not start: ${error.message}`));
})();
