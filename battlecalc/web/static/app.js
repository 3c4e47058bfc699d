// battlecalc's page: a form built from /api/spec, results from /api/run, charts in SVG.
// No framework, no build step, nothing fetched but this server's own API.
"use strict";

(() => {
  const DEBOUNCE_MS = 120;
  const SLOW_NOTICE_MS = 600;   // no answer by then: say that this battle takes seconds
  const SHOWN_STATE = 0.0005;   // end states below 0.05% are left out
  const PRUNED_SHOWN = 5e-7;    // probability left out by the exact solver: shown from 0.00005%
  const HISTORY_KEY = "battlecalc.history";
  const HISTORY_SIZE = 12;
  // the first visit (no battle in the URL): an example, answered at once
  const EXAMPLE = "rules=1942-2e&attacker=3+infantry%2C+1+artillery%2C+2+tank%2C+1+fighter" +
    "&defender=5+infantry%2C+1+tank%2C+1+aa";
  // sent with every API request: the server answers nothing else (a page of another site
  // cannot send a custom header: that needs a CORS preflight, which the server never grants)
  const CLIENT_HEADER = { "X-Battlecalc-Client": "page" };
  // this page's requests: a newer one replaces (and the server cancels) the older
  const PAGE_ID = Math.random().toString(36).slice(2) + Date.now().toString(36);
  let requestNumber = 0;
  let slowTimer = null;
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
  const rolesOf = () => kind().armies.filter((role) => role in (edition().roles[state.kind] || {}));
  const planning = () => kind().command === "plan";
  const defending = () => planning() && state.options.defend === true;
  const armyLabel = (role) => (defending() && (spec.defend_army_labels || {})[role]) ||
    ((spec.kind_army_labels || {})[state.kind] || {})[role] || spec.army_labels[role] || role;
  // the form's value of an option for a kind (the planner at sea aims at attacker_win);
  // a value equal to the spec's default is the library's too and is not sent
  const defaultFor = (opt, kindId) => (opt.kind === "bool" ? false
    : String((opt.defaults_by_kind || {})[kindId] ?? opt.default ?? ""));
  const optionDefault = (opt) => defaultFor(opt, state.kind);
  const libraryDefault = (opt) => (opt.kind === "bool" ? false : String(opt.default ?? ""));

  // the edition's technologies a battle of the kind may use: a raid's, those that change it
  const techsOf = () => (state.kind === "raid"
    ? edition().techs.filter((t) => (edition().raid_techs || []).includes(t.name)) : edition().techs);

  const hasWaves = () => kind().command === "run" &&
    ((state.options.waves || "").trim() !== "" || (state.options.counterattack || "").trim() !== "");

  // an option shows (and is sent) only where it changes the answer: the battle kind, the
  // edition (spec.editions[].options) and the method say where
  function applies(opt) {
    const when = opt.when || {};
    const method = state.options.method ?? "auto";
    if (edition().options && !edition().options.includes(opt.name)) return false;
    if (when.waves === false && hasWaves()) return false;
    if (opt.name === "waves" || opt.name === "counterattack") {
      if (kind().command !== "run") return false;
    }
    if (when.models && !when.models.includes(edition().model)) return false;
    if (when.kinds && !when.kinds.includes(state.kind)) return false;
    if (when.methods && !when.methods.includes(method)) return false;
    if (opt.kind === "techs" && techsOf().length === 0) return false;
    return true;
  }

  // method auto on a battle the server answered exactly (keys: autoKey()): trials and seed
  // cannot change that answer, so they are neither shown nor sent; unknown or Monte Carlo:
  // shown and sent.  The page learns it from each answer's `method`.
  const AUTO_ONLY_MC = ["trials", "seed"];
  const solvedExactly = new Set();

  // the battle as sent, less trials and seed, under method auto (null for another method)
  function autoKey() {
    if ((state.options.method ?? "auto") !== "auto") return null;
    return kind().endpoint + apiParams(true).toString();
  }

  // shown and sent: what applies, less trials and seed where auto solves exactly
  function shown(opt) {
    if (!applies(opt)) return false;
    if (!AUTO_ONLY_MC.includes(opt.name)) return true;
    const key = autoKey();
    return key === null || !solvedExactly.has(key);
  }

  // ------------------------------------------------------------------ army notation

  function formatArmy(counts) {
    return edition().units.filter((u) => counts[u.name] > 0)
      .map((u) => `${counts[u.name]} ${u.name}`).join(", ");
  }

  // "3 inf, 1 art" -> {infantry: 3, artillery: 1}; null when a name is not the edition's
  function parseArmy(text) {
    const read = readArmy(text);
    return read.unread.length ? null : read.counts;
  }

  // what of an army's text reads: {counts: the units named right, unread: the rest's words}
  function readArmy(text) {
    const aliases = edition().aliases;
    const counts = {};
    const unread = [];
    const entry = /([+-]?\d+)?\s*([^\s\d,+-][^\s\d,]*)/gu;
    for (const match of text.matchAll(entry)) {
      const name = match[2].toLowerCase().replace(/-/g, "_");
      const canonical = aliases[name] ?? (name.endsWith("s") ? aliases[name.slice(0, -1)] : undefined);
      const count = match[1] === undefined ? 1 : parseInt(match[1], 10);
      if (!canonical || !(count > 0)) { unread.push(match[0].trim()); continue; }
      counts[canonical] = (counts[canonical] || 0) + count;
    }
    return { counts, unread };
  }

  function armyText(role) {
    if (state.raw[role] !== undefined) return state.raw[role];
    return formatArmy(state.armies[role] || {});
  }

  // ------------------------------------------------------------------ URL <-> state

  // the battle of a URL query; from: the save it comes from (its nations, territory, file)
  function readQuery(search, from = null) {
    state.from = from;
    state.note = "";  // what the form left out of the armies last (swap sides, an edition)
    const query = new URLSearchParams(search.replace(/^\?/, "") ? search : EXAMPLE);
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
      // an army that does not read: sent as written (the server says what is wrong), its
      // units that read in the steppers, the text in the army's text box to fix
      const read = readArmy(text);
      state.armies[role] = read.counts;
      if (read.unread.length) state.raw[role] = text;
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
    for (const role of rolesOf()) {
      const text = armyText(role);
      if (text) params.set(role, text);
    }
    return params;
  }

  const waveList = (text) => text.split(/[\n;]+/).map((w) => w.trim()).filter(Boolean);

  // the request as a JSON body: waves as a list, seeds as text (63 bits do not fit a number)
  function apiBody() {
    const body = {};
    for (const [key, value] of apiParams()) {
      if (key === "waves") body.waves = waveList(value);
      else body[key] = value;
    }
    if (kind().command === "run" && !hasWaves()) body.distributions = true;
    return body;
  }

  // the request: every army of the kind and every option that shows and is not at its default
  // (withoutMc: trials and seed left out, for autoKey)
  function apiParams(withoutMc) {
    const params = battleParams(false);
    for (const opt of spec.options) {
      if (withoutMc ? AUTO_ONLY_MC.includes(opt.name) || !applies(opt) : !shown(opt)) continue;
      const value = state.options[opt.name];
      // a form default is simulate's default too, except where the spec says it is not
      if (value === libraryDefault(opt) && !opt.send_default) continue;
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
      el("option", { value: e.id, text: `${e.name.replace(/^Axis & Allies /, "A&A ")} (${e.id})`,
                     selected: e.id === state.rules })));
    $("#edition-description").textContent = edition().description || "";
    $("#kinds").replaceChildren(...kindsOf(edition()).map((k) => el("label", {},
      el("input", { type: "radio", name: "kind", value: k.id, checked: k.id === state.kind,
                    onchange: () => { switchKind(k.id); buildForm(); changed(); } }),
      " " + k.label)));
    $("#swap").hidden = !["land", "sea", "amphibious", "formula"].includes(state.kind);
    buildArmies();
    buildOptions();
  }

  function switchKind(id) {
    for (const opt of spec.options) {
      if (state.options[opt.name] === defaultFor(opt, state.kind)) {
        state.options[opt.name] = defaultFor(opt, id);
      }
    }
    state.kind = id;
  }

  function unitLabel(unit) {
    const stats = edition().model === "dice" ? ` ${unit.attack}/${unit.defense}, ${unit.cost} IPC` : "";
    return el("span", { class: "name" }, unit.name.replace(/_/g, " "), el("small", { text: stats }));
  }

  // a side's totals, as a player counts them (aacalc's "unit totals"): units, their cost,
  // the sum of their printed attack and defence values and their hit points
  function totals(counts) {
    const sum = { units: 0, ipc: 0, attack: 0, defense: 0, hits: 0 };
    for (const unit of edition().units) {
      const n = counts[unit.name] || 0;
      if (!n) continue;
      sum.units += n;
      sum.ipc += n * (unit.cost || 0);
      sum.attack += n * (unit.attack || 0);
      sum.defense += n * (unit.defense || 0);
      sum.hits += n * (unit.hp || 1);
    }
    return sum;
  }

  function totalsText(counts) {
    const t = totals(counts);
    if (!t.units) return "no units";
    const words = [`${t.units} unit${t.units === 1 ? "" : "s"}`, `${t.ipc} IPC`];
    if (edition().model === "dice") {
      words.push(`attack ${t.attack}`, `defence ${t.defense}`, `${t.hits} hit${t.hits === 1 ? "" : "s"}`);
    }
    return words.join(" \u00b7 ");
  }

  function buildArmies() {
    const ed = edition();
    const boxes = rolesOf().map((role) => {
      const offered = ed.roles[state.kind];
      const names = (role === "pool" && defending() && offered.defend_pool) || offered[role] || [];
      const counts = state.armies[role] || (state.armies[role] = {});
      const steppers = new Map();  // unit name -> its count's input
      const sum = el("div", { class: "totals", id: `totals-${role}`, "data-role": role });
      // the army as text: the steppers' units, or what was typed (or linked) that does not
      // read, to fix (the server's message says what is wrong with it)
      const text = el("input", { type: "text", class: "army-text", id: `text-${role}`,
                                 "aria-label": `${armyLabel(role)} as text`,
                                 placeholder: "nobody: type e.g. 3 inf 1 art, or use + and \u2212",
                                 spellcheck: "false", autocomplete: "off" });
      const showCounts = () => {
        for (const [name, input] of steppers) {
          const n = counts[name] || 0;
          if (document.activeElement !== input) input.value = String(n);
          input.classList.toggle("nonzero", n > 0);
        }
        sum.textContent = totalsText(counts);
        const raw = state.raw[role];
        text.classList.toggle("unread", raw !== undefined);
        text.title = raw !== undefined ? `not read: ${readArmy(raw).unread.join(", ")}` : "";
        if (document.activeElement !== text) text.value = raw !== undefined ? raw : formatArmy(counts);
      };
      text.addEventListener("input", () => {
        const read = readArmy(text.value);
        for (const name of Object.keys(counts)) delete counts[name];
        Object.assign(counts, read.counts);
        if (read.unread.length) state.raw[role] = text.value;
        else delete state.raw[role];
        showCounts();
        changed();
      });
      text.addEventListener("change", showCounts);  // (left: written out as read)
      const rows = names.map((name) => {
        const unit = ed.units.find((u) => u.name === name);
        const input = el("input", { type: "number", min: "0", max: "1000", step: "1",
                                    value: String(counts[name] || 0), id: `army-${role}-${name}`,
                                    "aria-label": `${role} ${name}` });
        steppers.set(name, input);
        const set = (n) => {
          n = Math.max(0, Math.min(1000, Number.isFinite(n) ? Math.trunc(n) : 0));
          if (n) counts[name] = n; else delete counts[name];
          input.value = String(n);
          delete state.raw[role];
          showCounts();
          changed();
        };
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
      showCounts();
      return el("fieldset", { class: role, id: `army-${role}` },
        el("legend", { text: armyLabel(role) }), ...rows, text, sum);
    });
    $("#armies").replaceChildren(...boxes);
  }

  function optionControl(opt) {
    const value = state.options[opt.name];
    const id = `opt-${opt.name}`;
    const set = (v) => {
      state.options[opt.name] = v;
      if (["method", "waves", "counterattack"].includes(opt.name)) showOptions();
      if (opt.name === "defend") buildArmies();
      changed();
    };
    if (opt.kind === "bool") {
      return el("label", { class: "option bool", "data-option": opt.name },
        el("input", { type: "checkbox", id, name: opt.name, checked: value === true,
                      onchange: (e) => set(e.target.checked) }), " " + opt.label);
    }
    let control;
    if (opt.kind === "armies") {
      control = el("textarea", { id, name: opt.name, rows: "2", placeholder: "2 inf 1 tank",
                                 oninput: (e) => set(e.target.value) });
      control.value = value ?? "";
    } else if (opt.choices_from) {
      const choices = ["", ...(edition()[opt.choices_from] || [])];
      control = el("select", { id, name: opt.name, onchange: (e) => set(e.target.value) },
        ...choices.map((c) => el("option", { value: c, text: c === "" ? "(choose)" : c,
                                             selected: c === value })));
    } else if (opt.kind === "goal") {
      return goalBuilder(opt, value, set);
    } else if (opt.kind === "choice") {
      const choices = (opt.choices_by_kind || {})[state.kind] || opt.choices;
      control = el("select", { id, name: opt.name, onchange: (e) => set(e.target.value) },
        ...choices.map((c) => el("option", { value: c, text: c === "" ? "(default)" : c,
                                             selected: c === value })));
    } else if (opt.kind === "techs") {
      const chosen = new Set(String(value || "").split(",").map((t) => t.trim()).filter(Boolean));
      const boxes = techsOf().map((t) => el("label", { title: t.description },
        el("input", { type: "checkbox", value: t.name, checked: chosen.has(t.name),
                      id: `${id}-${t.name}`,
                      onchange: (e) => {
                        if (e.target.checked) chosen.add(t.name); else chosen.delete(t.name);
                        set(techsOf().map((x) => x.name).filter((n) => chosen.has(n)).join(","));
                      } }), " " + t.name.replace(/_/g, " ")));
      return el("div", { class: "option techs", "data-option": opt.name },
        el("span", { text: opt.label }), el("div", {}, ...boxes));
    } else if (opt.percent) {  // a probability, typed in percent as the planner's goal is
      control = el("input", {
        id, name: opt.name, type: "number", value: percentOf(value), min: "0", max: "100",
        step: "any", oninput: (e) => set(fractionOf(e.target.value.trim())),
      });
      return el("label", { class: "option", "data-option": opt.name, title: opt.help || "" },
        el("span", { text: opt.label }), el("span", { class: "unit-input" }, control, " %"),
        opt.help ? el("span", { class: "help", text: opt.help }) : null);
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

  // a probability's text (a fraction, as sent) in percent, and back ("" stays "")
  const percentOf = (text) => (String(text ?? "").trim() === "" || !Number.isFinite(Number(text))
    ? String(text ?? "") : String(Number((100 * Number(text)).toPrecision(12))));
  const fractionOf = (text) => (text === "" || !Number.isFinite(Number(text)) ? text
    : String(Number((Number(text) / 100).toPrecision(12))));

  // the planner's goal: each goal a figure, a comparison and a value (probabilities in
  // percent); written as the goal text the API reads ("attacker_win>=0.9, tuv_swing>=2")
  const GOAL = /^\s*([a-z_]+)\s*(>=|<=)\s*([0-9.eE+-]+)\s*(%?)\s*$/;
  function goalBuilder(opt, value, set) {
    const figures = spec.goal_figures || [];
    const isShare = (key) => (figures.find((f) => f[0] === key) || [])[2] === true;
    const rows = String(value || "").split(",").map((text) => {
      const m = GOAL.exec(text);
      if (!m) return null;
      const number = Number(m[3]) / (m[4] ? 100 : 1);
      const shown = isShare(m[1]) ? Number((100 * number).toPrecision(12)) : number;
      return { key: m[1], op: m[2], value: String(shown) };
    }).filter(Boolean);
    if (!rows.length) rows.push({ key: figures[0][0], op: ">=", value: "90" });
    const box = el("div", { class: "option goal", "data-option": opt.name, title: opt.help || "" },
      el("span", { text: opt.label }));
    const write = () => {
      const text = rows.map((r) => {
        const number = Number(r.value);
        const sent = isShare(r.key) && Number.isFinite(number)
          ? Number((number / 100).toPrecision(12)) : r.value.trim();
        return `${r.key}${r.op}${sent}`;
      }).join(", ");
      set(text);
    };
    const draw = () => {
      const lines = rows.map((r, i) => el("div", { class: "goal-row", "data-goal": String(i) },
        el("select", { "aria-label": "figure", class: "goal-key",
                       onchange: (e) => { r.key = e.target.value; draw(); write(); } },
          ...figures.map(([key, label]) => el("option", { value: key, text: label,
                                                          selected: key === r.key }))),
        el("select", { "aria-label": "comparison", class: "goal-op",
                       onchange: (e) => { r.op = e.target.value; write(); } },
          el("option", { value: ">=", text: "at least", selected: r.op === ">=" }),
          el("option", { value: "<=", text: "at most", selected: r.op === "<=" })),
        el("input", { type: "number", step: "any", class: "goal-value", value: r.value,
                      "aria-label": "value", oninput: (e) => { r.value = e.target.value; write(); } }),
        el("span", { class: "goal-unit", text: isShare(r.key) ? "%" : "" }),
        rows.length > 1 ? el("button", { type: "button", text: "\u2212", "aria-label": "remove this goal",
          onclick: () => { rows.splice(i, 1); draw(); write(); } }) : null));
      box.replaceChildren(el("span", { text: opt.label }), ...lines,
        el("button", { type: "button", class: "goal-add", text: "and another goal",
          onclick: () => { rows.push({ key: "attacker_ipc_loss", op: "<=", value: "10" }); draw(); write(); } }),
        opt.help ? el("span", { class: "help", text: opt.help }) : null);
    };
    draw();
    return box;
  }

  // the option groups are folded, each with one line of what is set in it (the page stays
  // short on a phone); a group the player opened stays open while the page is open
  const openGroups = new Set();

  function buildOptions() {
    const groups = new Map();
    for (const opt of spec.options) {
      if (!groups.has(opt.group)) groups.set(opt.group, []);
      groups.get(opt.group).push(optionControl(opt));
    }
    $("#options").replaceChildren(...[...groups].map(([name, controls]) => {
      const box = el("details", { class: "group", "data-group": name, open: openGroups.has(name) },
        el("summary", {}, el("span", { class: "group-name", text: name }),
          el("span", { class: "group-set", "data-set": name })), ...controls);
      box.addEventListener("toggle", () => {
        if (box.open) openGroups.add(name); else openGroups.delete(name);
      });
      return box;
    }));
    showOptions();
  }

  // an option's value in words, for its group's line ("" at its default)
  function optionWords(opt) {
    const value = state.options[opt.name];
    if (value === optionDefault(opt) || value === "" || value === undefined || value === false) return "";
    if (opt.kind === "bool") return opt.label;
    if (opt.kind === "goal") return goalWords(String(value).split(",").map((g) => g.trim()).filter(Boolean));
    if (opt.percent) return `${opt.label} ${percentOf(value)}%`;
    const shownValue = String(value).replace(/\n/g, "; ");
    return `${opt.label} ${shownValue.length > 40 ? `${shownValue.slice(0, 39)}\u2026` : shownValue}`;
  }

  function showOptions() {
    for (const opt of spec.options) {
      const node = document.querySelector(`[data-option="${opt.name}"]`);
      if (node) node.hidden = !shown(opt);
    }
    for (const box of document.querySelectorAll("#options details.group")) {
      box.hidden = [...box.querySelectorAll("[data-option]")].every((n) => n.hidden);
      const group = box.dataset.group;
      const set = spec.options.filter((o) => o.group === group && shown(o)).map(optionWords)
        .filter(Boolean);
      const line = box.querySelector(".group-set");
      line.textContent = set.length ? set.join(", ") : "defaults";
      line.classList.toggle("changed", set.length > 0);
    }
  }

  // ------------------------------------------------------------------ requests

  function changed() {
    showStart();
    showOptions();
    const query = pageQuery().toString();
    const url = `${location.pathname}?${query}`;
    history.replaceState(null, "", url);
    $("#share").href = url;
    $("#cli").textContent = cliLine(apiParams());
    document.body.dataset.state = "pending";
    clearTimeout(timer);
    timer = setTimeout(run, DEBOUNCE_MS);
  }

  // ------------------------------------------------------------------ where a battle starts

  const the = (nations, fallback) => (nations && nations.length
    ? nations.map((n) => (/^neutral/i.test(nationWords(n)) ? `a ${nationWords(n)}` : `the ${nationWords(n)}`))
      .join(" and ") : fallback);
  const hits = (n) => `${n} hit${n === 1 ? "" : "s"}`;

  // the start state in words ("from round 1, the Russians fired 1 hit, the Germans to
  // choose"); "" for a battle from its start.  from: the save's nations, where it comes from
  function startWords(o = state.options, from = state.from) {
    const round = Number(o.start_round || 1);
    const step = o.start_step || "start";
    const ha = Number(o.hits_on_attacker || 0);
    const hd = Number(o.hits_on_defender || 0);
    const hb = Number(o.bombard_hits || 0);
    const aw = String(o.attacker_waiting || "").trim();
    const dw = String(o.defender_waiting || "").trim();
    if (round === 1 && step === "start" && !ha && !hd && !hb && !aw && !dw) return "";
    const A = the(from && from.attacker_nations, "the attacker");
    const D = the(from && from.defender_nations, "the defender");
    const raid = state.kind === "raid";
    const steps = {
      start: `${round > 1 ? "" : "at its start, "}both sides to fire`,
      air_battle: "the air battle to fight",
      aa_fire: raid ? "the AA to fire at the bombers" : `${D}' AA to fire`,
      aa_casualties: `the AA fired ${hits(ha)}, ${A} to choose`,
      bombing: "the bombers over the target, the AA's casualties removed",
      bombard_fire: "the ships to bombard",
      bombard_casualties: `the ships bombarded ${hits(hd)}, ${D} to choose`,
      attacker_fire: `${A} to fire`,
      defender_fire: hd ? `${A} fired ${hits(hd)}, ${D} to choose` : `${D} to fire`,
      general_casualties: `${D} fired ${hits(ha)}, ${A} to choose`,
      end_of_round: "both sides fired, the casualties to remove",
      attacker_strike: `${A}' submarines to strike first`,
      defender_strike: hd ? `${A}' submarines struck ${hits(hd)}, ${D} to choose`
        : `${D}' submarines to strike`,
      strike_casualties: `${D}' submarines struck ${hits(ha)}, ${A} to choose`,
    };
    const parts = [raid ? `from ${steps[step] || step}` : `from round ${round}, ${steps[step] || step}`];
    if (step === "defender_fire" && ha) parts.push(`${hits(ha)} pending on ${A}`);
    if (hb) parts.push(`${hits(hb)} of the bombardment fire back`);
    if (aw) parts.push(`${A}' casualties chosen: ${aw}`);
    if (dw) parts.push(`${D}' casualties chosen: ${dw}`);
    return parts.join("; ").replace(/([^s])' /g, "$1's ");
  }

  function showStart() {
    const words = kind().command === "plan" || kind().id === "formula" ? "" : startWords();
    const box = $("#start-words");
    box.textContent = words ? `Starts where it stands: ${words}` : "";
    box.hidden = !words;
    const from = $("#from-save");
    const source = state.from;
    from.hidden = !source;
    from.textContent = source ? `From ${source.file ? `the save ${source.file}` : "the save"}: ` +
      `${source.territory}` + (source.stands ? ` (${source.stands})` : "") : "";
    from.classList.toggle("gone", Boolean(source && source.gone));
    const note = $("#army-changes");
    note.textContent = state.note || "";
    note.hidden = !state.note;
    if (source && source.gone) {
      from.append(el("strong", { class: "gone-note", text: ` \u2014 no longer pending in the ` +
        `newest save (${source.gone}): this is the battle as it stood then` }));
    }
  }

  // what will run, in words: the server's first progress line names the method the solver
  // chose and whether the kernels compile first (a first run: a minute or two)
  function planNotice(told) {
    if (!told) return null;
    if (told.compiling) {
      return "compiling kernels (first run only): the solvers compile once after installing, " +
        `a minute or two; then the battle is solved${told.method === "exact" ? " exactly"
          : told.method === "mc" ? " by Monte Carlo" : ""}\u2026`;
    }
    if (told.method === "exact") return "solving exactly\u2026";
    if (told.method === "mc" && told.trials) {
      return `Monte Carlo, ${Number(told.trials).toLocaleString("en")} trials\u2026`;
    }
    return null;
  }

  // a battle that takes seconds says so before it starts (Monte Carlo with many trials), and
  // any request still out after SLOW_NOTICE_MS says what it is waiting for
  function slowNotice(body) {
    const trials = Number(String(body.trials || "").replace(/[,_]/g, "")) ||
      (kind().command === "plan" ? 100000 : 1000000);
    const mc = body.method === "mc";
    const big = mc && trials >= 2000000;
    if (big) return `Monte Carlo with ${trials.toLocaleString("en")} trials: this takes a few seconds\u2026`;
    return null;
  }

  // a progress line in words: Monte Carlo's trials, the planner's search, the optimal
  // retreat's table, ... each with its count
  function progressWords(p) {
    const share = `${p.progress.toLocaleString("en")} of ${p.total.toLocaleString("en")}`;
    const percent = `(${Math.floor(100 * p.progress / p.total)}%)`;
    if (p.what === "trials") return `Monte Carlo: ${share} trials ${percent}\u2026`;
    if (p.what === "plan search") {
      return `planning: ${share} candidate forces searched ${percent}, each solved ` +
        `(${kind().label.toLowerCase()})\u2026`;
    }
    return `${p.what}: ${share} ${percent}\u2026`;
  }

  window.battlecalcProgressWords = progressWords;  // (the page's words, for tests and the console)

  // a streamed answer's lines (application/x-ndjson): onLine(line) for each line that is not
  // blank, as it arrives; returns what followed the last newline
  async function readLines(response, onLine) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffered = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
      const lines = buffered.split("\n");
      buffered = lines.pop();
      for (const line of lines) if (line.trim()) onLine(line);
    }
    return buffered;
  }

  // read a streamed answer: show each progress line, return the last line's text
  async function readStream(response, controller, told) {
    let last = "";
    const rest = await readLines(response, (line) => {
      if (line.startsWith('{"progress"')) {
        const p = JSON.parse(line);
        if (!p.total) {  // a notice: what will run, or kernels compiling
          if (p.method) Object.assign(told, p);
          if (p.compiling) told.compiling = true;
          if (controller === inflight) showNotice(planNotice(told) || p.what);
        } else if (controller === inflight) {
          told.compiling = false;
          told.counted = true;
          $("#stop").hidden = false;
          showNotice(progressWords(p));
          showRunning(p);
        }
      } else {
        last = line;
      }
    });
    return last || rest;
  }

  // the running estimate of a streaming Monte Carlo run, each outcome with its 95% interval
  // (the server's progress lines carry them: "estimate", "ci95")
  const RUNNING = [["attacker_win", "attacker wins"], ["defender_win", "defender wins"],
                   ["draw", "draw"]];
  function showRunning(p) {
    const box = $("#running");
    if (!p || !p.estimate) {
      box.replaceChildren();
      box.hidden = true;
      return;
    }
    box.replaceChildren(el("span", { text: `so far (${p.progress.toLocaleString("en")} trials): ` }),
      ...RUNNING.filter(([key]) => key in p.estimate).map(([key, label], i) => {
        const [lo, hi] = p.ci95[key];
        return el("span", { class: "running-value", "data-key": key,
          "data-value": String(p.estimate[key]), "data-lo": String(lo), "data-hi": String(hi),
          text: `${i ? ", " : ""}${label} ${pct(p.estimate[key])} (95%: ${pct(lo)}\u2013${pct(hi)})` });
      }));
    box.hidden = false;
  }

  function showNotice(text) {
    const box = $("#notice");
    box.textContent = text || "";
    box.hidden = !text;
  }

  // the army a battle of the kind cannot run without: the attacker (the pool, planning an
  // attack)
  const neededArmy = () => (planning() && !defending() ? "pool" : "attacker");

  // nothing to run yet (armies cleared, a page opened on an edition alone): a word on what
  // to do, not an error
  function showEmpty(role) {
    if (inflight) { inflight.abort(); inflight = null; }
    lastQuery = null;
    clearTimeout(slowTimer);
    showNotice(null);
    showRunning(null);
    showWarnings([]);
    $("#stop").hidden = true;
    $("#error").hidden = true;
    clearResults();
    $("#summary").replaceChildren();
    showHeadings();
    $("#results").classList.remove("busy", "stale");
    $("#headline").replaceChildren(el("span", { class: "hint", id: "hint",
      text: `Give ${armyLabel(role).replace(/ \(.*\)$/, "").toLowerCase() === "attacker"
        ? "the attacker's units" : `the units of \u201c${armyLabel(role)}\u201d`}: + beside ` +
        "each unit, or type the army (3 inf 1 art)" }));
    $("#glance").hidden = true;
    $("#status").textContent = "";
    document.body.dataset.state = "empty";
  }

  // a value the form can tell is wrong before asking (a percentage above 100): its message
  function formProblem() {
    for (const opt of spec.options) {
      if (!opt.percent || !shown(opt)) continue;
      const value = String(state.options[opt.name] ?? "").trim();
      if (value === "") continue;
      const fraction = Number(value);
      if (!Number.isFinite(fraction) || fraction < 0 || fraction > 1) {
        return `\u201c${opt.label}\u201d is a percentage from 0 to 100, got ${percentOf(value)}`;
      }
    }
    return null;
  }

  // the stop button: the run in progress stops here and on the server (its request is
  // cancelled); "run again" asks again
  function stopRun() {
    if (!inflight) { lastQuery = null; run(); return; }
    const controller = inflight;
    inflight = null;
    controller.abort();
    clearTimeout(slowTimer);
    showRunning(null);
    showNotice("stopped; the results below are those of the battle before");
    $("#results").classList.remove("busy");
    $("#results").classList.add("stale");
    $("#status").textContent = "stopped";
    const button = $("#stop");
    button.textContent = "run again";
    button.hidden = false;
    document.body.dataset.state = "stopped";
  }

  async function run() {
    timer = null;
    if (!armyText(neededArmy())) { showEmpty(neededArmy()); return; }
    const problem = formProblem();
    if (problem) {
      if (inflight) { inflight.abort(); inflight = null; }
      showError(problem);
      $("#status").textContent = "";
      document.body.dataset.state = "error";
      return;
    }
    const body = apiBody();
    const query = kind().endpoint + JSON.stringify(body);
    if (query === lastQuery) {
      if (!inflight) document.body.dataset.state = "idle";
      return;
    }
    if (inflight) inflight.abort();
    const controller = new AbortController();
    inflight = controller;
    const stop = $("#stop");
    stop.textContent = "stop";
    stop.hidden = true;
    const started = performance.now();
    const number = ++requestNumber;
    const asked = autoKey();
    $("#results").classList.add("busy");
    $("#status").textContent = "computing\u2026";
    showNotice(slowNotice(body));
    showRunning(null);
    clearTimeout(slowTimer);
    const told = {};  // what the server said will run (planNotice)
    slowTimer = setTimeout(() => {
      if (controller !== inflight) return;
      stop.hidden = false;
      if (told.counted) return;  // (a progress line with its count is shown)
      showNotice(planNotice(told) || slowNotice(body) || (kind().command === "plan"
        ? "planning: the candidate forces are being solved\u2026"
        : "waiting for the server\u2026"));
    }, SLOW_NOTICE_MS);
    try {
      // Monte Carlo and the planner stream their progress (lines of JSON), the rest answers
      // in one object (auto battles too: an exact answer comes as one line, Monte Carlo with
      // its progress)
      const stream = body.method === "mc" || kind().command === "plan" ||
        (kind().command === "run" && body.method !== "exact");
      const headers = { "Content-Type": "application/json", ...CLIENT_HEADER,
                        "X-Battlecalc-Page": PAGE_ID, "X-Battlecalc-Request": String(number) };
      if (stream) headers.Accept = "application/x-ndjson";
      let response = await fetch(kind().endpoint, {
        method: "POST", body: JSON.stringify(body), signal: controller.signal, cache: "no-store",
        headers });
      let text = stream ? await readStream(response, controller, told) : await response.text();
      if (controller !== inflight) return;
      showRunning(null);
      if (stream) {
        // the last line: {"status": 200, "result": {...}} or {"status": 400, "error": ...}
        const status = Number((/^\{"status": (\d+)/.exec(text) || [])[1] || response.status);
        const inner = /^\{"status": \d+, "result": ([\s\S]*)\}$/.exec(text);
        text = inner ? inner[1] : text;
        response = { ok: status === 200, status };
      }
      const data = JSON.parse(text);
      // the seed as the server wrote it: JSON numbers above 2**53 lose digits in JavaScript
      const seed = /"seed": (\d+)/.exec(text);
      if (seed) data.seed_text = seed[1];
      const ms = Math.round(performance.now() - started);
      if (!response.ok) {
        showError(data.error ? pageMessage(data.error) : `HTTP ${response.status}`);
        $("#status").textContent = `error (${ms} ms)`;
        document.body.dataset.state = timer === null ? "error" : "pending";
      } else {
        lastQuery = query;
        if (asked !== null && typeof data.method === "string") {
          if (data.method === "exact") solvedExactly.add(asked);
          else solvedExactly.delete(asked);
        }
        render(data, ms);
        remember(data);
        // the command line again: an answer solved exactly needs no trials nor seed
        $("#cli").textContent = cliLine(apiParams());
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
        clearTimeout(slowTimer);
        showNotice(null);
        stop.hidden = true;
        $("#results").classList.remove("busy");
      }
    }
  }

  // the API names a parameter by its keyword (keep_land); the page by the field's label.
  // Keywords with an underscore anywhere, one-word ones where a message names them
  // ("counter must be ...", as battlecalc.options.flag_message does for flags)
  function pageMessage(message, options = spec.options) {
    // the command line's words the page has no use for: its help, the planner's jargon
    message = message.replace(/;? ?see `battlecalc [a-z]+ --help`/g, "")
      .replace(/the monotone pruning does not apply/g,
               "a stronger force is not sure to do better here, so no force is skipped")
      .replace(/the monotone pruning/g, "skipping forces");
    // the command line's flags (--defend, --attacker) as the fields of the form
    let text = message.replace(/(^|[\s(])--([a-z][a-z-]*)/g, (whole, before, flag) => {
      const name = flag.replace(/-/g, "_");
      const option = options.find((o) => o.name === name);
      if (option) return `${before}"${option.label}"`;
      if (name in spec.army_labels) return `${before}"${armyLabel(name)}"`;
      return whole;
    });
    for (const opt of options) {
      if (!opt.label || opt.label === opt.name) continue;
      const after = opt.name.includes("_") ? "(?![\\w-])" : "(?=\\s+must\\b|:)";
      const label = opt.label.includes(" ") ? `"${opt.label}"` : `"${opt.label}" (${opt.group})`;
      text = text.replace(new RegExp(`(^|[^\\w-])${opt.name}${after}`, "g"), `$1${label}`);
    }
    return text;
  }

  // the error where the outcome was: on a phone the headline stays on top of the screen
  function showError(message) {
    lastQuery = null;
    const box = $("#error");
    box.textContent = message;
    box.hidden = false;
    $("#results").classList.add("stale");
    $("#headline").replaceChildren(el("strong", { class: "error", text: message }));
    $("#glance").hidden = true;
    showWarnings([]);
  }

  // what the run did not use, as the command line warns of it ("Warning: ...")
  function showWarnings(lines) {
    const box = $("#warnings");
    box.replaceChildren(...(lines || []).map((line) =>
      el("li", { class: "warning", text: `Warning: ${pageMessage(line)}` })));
    box.hidden = !box.childElementCount;
  }

  // the "same numbers" command line: each parameter as its flag (spec.flags, from the table of
  // options), a flag alone for a boolean, choices in the command line's spelling (low-luck)
  function cliLine(params, flags = spec.flags, options = spec.options,
                   command = typeof kind === "function" ? kind().command : "run") {
    const quote = (s) => (/^[\w.,:+-]+$/.test(s) ? s : `"${s.replace(/(["\\$`])/g, "\\$1")}"`);
    const words = ["battlecalc", command];
    for (const [key, value] of params) {
      const flag = flags[key];
      const option = options.find((o) => o.name === key);
      if (option && option.values_flags) { words.push(option.values_flags[value]); continue; }
      if (!flag) continue;  // rounds_distribution: --format csv --distribution rounds
      if (key === "waves") {
        for (const wave of value.split(/[\n;]+/).map((w) => w.trim()).filter(Boolean)) {
          words.push(flag, quote(wave));
        }
      }
      else if (key === "sea" || (option && option.kind === "bool")) words.push(flag);
      else if (option && option.kind === "choice") words.push(flag, quote(value.replace(/_/g, "-")));
      else words.push(flag, quote(value));
    }
    return words.join(" ");
  }

  // ------------------------------------------------------------------ results

  const army = (x) => (typeof x === "string" ? x : formatArmy(x || {})) || "nothing";

  // {unit: count} less another
  function minus(counts, less) {
    const out = { ...counts };
    for (const [name, n] of Object.entries(less || {})) {
      out[name] = (out[name] || 0) - n;
      if (out[name] <= 0) delete out[name];
    }
    return out;
  }

  // what was fought, in words: the edition, the armies (landing, bombarding), the dice.  An
  // amphibious assault's attacker counts its landed units: they are named once, as landing
  function battleWords(data) {
    const words = [el("strong", { text: `${data.rules}: ` })];
    const landing = data.landing && Object.keys(data.landing).length ? army(data.landing) : "";
    const bombard = data.bombard && Object.keys(data.bombard).length ? army(data.bombard) : "";
    let attacker = data.attacker;
    if (landing) {
      const all = typeof data.attacker === "string" ? parseArmy(data.attacker) : data.attacker;
      const overland = all ? formatArmy(minus(all, data.landing)) : "";
      attacker = `${overland ? `${overland} overland or by air and ` : ""}${landing} landing ` +
        "from transports";
    }
    if (bombard) attacker += ` (bombarding: ${bombard})`;
    words.push(`${attacker} attacking ${data.defender}${data.sea ? " at sea" : ""}`);
    if (data.dice === "low_luck") words.push(el("strong", { text: " \u2014 low luck" }));
    return words;
  }

  function methodWords(data, ms) {
    const exact = data.method === "exact";
    const seed = data.seed_text ?? data.seed;
    const trials = typeof data.trials === "number" ? data.trials.toLocaleString("en") : "";
    const how = exact ? "exact" : `Monte Carlo, ${trials} trials, seed ${seed}`;
    return el("span", { class: "method", id: "method", "data-value": data.method,
                        "data-seed": seed === null || seed === undefined ? "" : String(seed),
      text: `method: ${how} \u2014 solved in ${(1000 * data.elapsed_s).toFixed(1)} ms, answered in ${ms} ms` });
  }

  // the outcome first: one line and one bar, on top of the screen on a phone.  parts: [label,
  // p, side ("attacker", "defender" or none), bar (a part of the bar of its own: "retreat")];
  // the bar: the attacker's wins, the parts of their own, the rest (draws, stalemates), the
  // defender's wins, each titled
  function headline(parts, restTitle = "neither (draw, stalemate)") {
    $("#headline").replaceChildren(...parts.flatMap(([label, p, side, bar], i) => [
      i ? " \u00b7 " : "", `${label} `, el("strong", { class: side || bar || "", text: pct(p) })]));
    const cell = (cls, p, title) => {
      const span = el("span", { class: cls, title: `${title} ${pct(p)}` });
      span.style.width = `${100 * Math.max(0, p)}%`;
      return span;
    };
    const wins = parts.filter(([, , side]) => side);
    const own = parts.filter(([, , side, bar]) => !side && bar);
    const cells = [];
    for (const [label, p, side] of wins.filter(([, , s]) => s === "attacker")) {
      cells.push(cell(`${side}_win`, p, label));
    }
    for (const [label, p, , bar] of own) cells.push(cell(bar, p, label));
    const rest = 1 - [...wins, ...own].reduce((t, [, p]) => t + p, 0);
    if (wins.length && rest > 1e-12) cells.push(cell("rest", rest, restTitle));
    for (const [label, p, side] of wins.filter(([, , s]) => s === "defender")) {
      cells.push(cell(`${side}_win`, p, label));
    }
    const bar = $("#glance");
    bar.replaceChildren(...cells);
    bar.hidden = !wins.length;
  }

  function clearResults() {
    for (const id of ["#outcomes", "#numbers", "#survivors", "#cumulative", "#states", "#charts",
                      "#plans", "#decisions"]) $(id).replaceChildren();
    $("#decisions").hidden = true;
  }

  // a heading shows only above something (a raid has no end states, a plan no charts)
  function showHeadings() {
    for (const h of document.querySelectorAll("h2[data-for]")) {
      h.hidden = !document.getElementById(h.dataset.for).childElementCount;
    }
  }

  function render(data, ms) {
    try {
      renderAll(data, ms);
    } finally {
      showHeadings();
      showOptions();
    }
  }

  function renderAll(data, ms) {
    $("#error").hidden = true;
    showWarnings(data.warnings);
    $("#results").classList.remove("stale");
    clearResults();
    const exact = data.method === "exact";
    if (Array.isArray(data.plans)) return renderPlan(data, ms);
    if ("expected_damage" in data) return renderRaid(data, ms, exact);
    $("#summary").replaceChildren(...battleWords(data), el("br"), methodWords(data, ms));
    if (Array.isArray(data.waves)) return renderWaves(data, exact);
    const parts = [["attacker wins", data.attacker_win, "attacker"],
                   ["defender wins", data.defender_win, "defender"]];
    // a retreat (an optimal one: 72% of the time) is an outcome as much as a win
    if (data.retreat > 0) parts.push(["retreats", data.retreat, null, "retreat"]);
    if (data.draw > 0) parts.push(["draw", data.draw]);
    if (!data.sea && data.takes_territory !== undefined && data.takes_territory !== data.attacker_win) {
      parts.push(["takes the territory", data.takes_territory]);
    }
    headline(parts);
    renderOutcomes(data, exact);
    renderNumbers(data, exact);
    renderDecisions(data.decisions);
    renderSurvivors(data);
    renderCumulative(data.distributions);
    renderStates(data.distributions);
    renderCharts(data);
  }

  // "keeps at least N units": P(units left >= N), from each side's law of units left
  function atLeast(pairs) {
    if (!pairs || !pairs.length) return [];
    const top = Math.max(...pairs.map(([n]) => n));
    const out = [];
    for (let n = 1; n <= top; n++) {
      out.push([n, pairs.filter(([m]) => m >= n).reduce((t, [, p]) => t + p, 0)]);
    }
    return out;
  }

  function renderCumulative(laws) {
    const a = atLeast(laws && laws.attacker && laws.attacker.units_left);
    const d = atLeast(laws && laws.defender && laws.defender.units_left);
    const top = Math.max(a.length, d.length);
    if (!top) return;
    const cell = (rows, n, side) => (rows[n - 1]
      ? el("td", { "data-key": `${side}_keeps_at_least.${n}`, "data-value": String(rows[n - 1][1]),
                   text: pct(rows[n - 1][1]) }) : el("td", { text: "\u2013" }));
    const rows = [];
    for (let n = 1; n <= top; n++) {
      rows.push(el("tr", {}, el("td", { text: `${n}` }), cell(a, n, "attacker"), cell(d, n, "defender")));
    }
    $("#cumulative").replaceChildren(el("tr", {}, el("th", { text: "at least N units left" }),
      el("th", { text: "attacker" }), el("th", { text: "defender" })), ...rows);
  }

  function renderRaid(data, ms, exact) {
    $("#summary").replaceChildren(el("strong", { text: `${data.rules}: ` }),
      `${data.attacker} raiding${data.facility ? ` a ${data.facility} facility` : ""}` +
      `${data.target_value !== null && data.target_value !== undefined ? ` (production ${data.target_value})` : ""}` +
      `${data.defender && data.defender !== "nothing" ? `, intercepted by ${data.defender}` : ""}`,
      ...(data.dice === "low_luck" ? [el("strong", { text: " \u2014 low luck" })] : []),
      el("br"), methodWords(data, ms));
    $("#headline").replaceChildren("expected damage ",
      el("strong", { class: "attacker", text: fixed(data.expected_damage, 2) }),
      ` IPC \u00b7 attacking aircraft lost ${fixed(data.attacker_ipc_loss, 1)} IPC`);
    $("#glance").hidden = true;
    renderNumbers(data, exact);
    renderSurvivors(data);
    const law = Object.entries(data.damage_distribution || {}).map(([k, p]) => [Number(k), p]);
    $("#charts").replaceChildren(chart("Damage", [{ name: "damage", color: "attacker", pairs: law }],
      "damage (IPC)"), chart("Damage at least", [{ name: "damage", color: "attacker",
      pairs: law.map(([v]) => [v, law.filter(([w]) => w >= v).reduce((t, [, p]) => t + p, 0)]) }],
      "damage at least (IPC)"));
  }

  function renderPlan(data, ms) {
    const best = data.plans[0];
    const side = data.mode === "defend" ? "defender" : "attacker";
    $("#summary").replaceChildren(el("strong", { text: `${data.rules}: ` }),
      `${data.mode === "defend" ? "defending against" : "attacking"} ${data.opponent}` +
      `${kind().battle === "sea" ? " at sea" : ""}, from ${data.pool}; goal: ${goalWords(data.goal)}; ` +
      `least ${data.objective}`,
      el("br"), el("span", { class: "method", id: "method", "data-value": data.method,
        text: `method: ${data.method}${data.seed_text ? `, seed ${data.seed_text}` : ""} \u2014 ` +
          `${data.solves} of ${data.forces} forces solved in ${(1000 * data.elapsed_s).toFixed(0)} ms, answered in ${ms} ms` }));
    if (!best) {
      $("#headline").replaceChildren(el("strong", { text: "no force from the pool meets the goal" }));
      $("#glance").hidden = true;
    } else {
      const [key, label] = kind().battle === "sea" ? ["attacker_win", "attacker wins"]
        : ["takes_territory", "takes the territory"];
      $("#headline").replaceChildren("best: ", el("strong", { class: side, text: best.addition }),
        ` (${best.cost} IPC) \u00b7 ${label} ${pct(best[key])}`);
      headlineBar(best);
    }
    const head = ["#", "from the pool", "IPC", "wins", "takes", "IPC lost", "swing", ""];
    $("#plans").replaceChildren(el("h2", { text: "Plans" }), el("table", { class: "plans", id: "plan-table" },
      el("tr", {}, ...head.map((h) => el("th", { text: h }))),
      ...data.plans.map((p, i) => el("tr", { "data-addition": p.addition },
        el("td", { text: String(i + 1) }), el("td", { class: "force", text: p.addition }),
        el("td", { "data-label": "IPC", text: String(p.cost) }),
        el("td", { "data-label": "wins", text: pct(p.attacker_win) }),
        el("td", { "data-label": "takes", text: pct(p.takes_territory) }),
        el("td", { "data-label": "IPC lost", text: fixed(p.attacker_ipc_loss, 2) }),
        el("td", { "data-label": "swing", text: signed(p.tuv_swing, 2) }),
        el("td", {}, el("button", { type: "button", class: "load-plan", "data-plan": String(i),
          text: "load into the form", onclick: () => loadPlan(p, data) }))))));
  }

  // the planner's goals in words ("attacker wins at least 90%")
  function goalWords(goals) {
    const figures = spec.goal_figures || [];
    return goals.map((text) => {
      const m = GOAL.exec(text);
      const figure = m && figures.find((f) => f[0] === m[1]);
      if (!figure) return text;
      const number = Number(m[3]) / (m[4] ? 100 : 1);
      const value = figure[2] ? `${Number((100 * number).toPrecision(12))}%` : String(number);
      return `${figure[1]} ${m[2] === ">=" ? "at least" : "at most"} ${value}`;
    }).join(" and ");
  }

  // a plan's battle in the battle form: its armies (the force chosen added), the planner's
  // options, and its trials and seed where it was solved by Monte Carlo: the same numbers
  function loadPlan(p, data) {
    const battle = kind().battle || "land";
    const landing = p.landing || {};
    const bombard = p.bombard || {};
    switchKind(battle);
    state.armies = {
      attacker: minus(parseArmy(p.attacker) || {}, landing),
      defender: parseArmy(p.defender) || {},
      landing: { ...landing }, bombard: { ...bombard },
    };
    state.raw = {};
    state.from = null;
    if (p.method === "mc") {
      state.options.trials = String(p.trials);
      state.options.seed = data.seed_text ?? String(p.seed);
    }
    buildForm();
    changed();
  }

  function headlineBar(result) {
    const bar = $("#glance");
    const cells = [["attacker_win", result.attacker_win], ["rest", 1 - result.attacker_win - result.defender_win],
                   ["defender_win", result.defender_win]].map(([cls, p]) => {
      const cell = el("span", { class: cls });
      cell.style.width = `${100 * Math.max(0, p)}%`;
      return cell;
    });
    bar.replaceChildren(...cells);
    bar.hidden = false;
  }

  function renderWaves(data, exact) {
    const parts = [["takes the territory", data.takes_territory, "attacker"]];
    if (typeof data.holds === "number") parts.push(["holds it after the counter-attack", data.holds]);
    headline(parts, "not taken");
    const rows = [];
    for (const [key, label] of [["takes_territory", "takes territory"],
      ["defender_eliminated", "defender eliminated"], ["holds", "holds after the counter-attack"]]) {
      if (typeof data[key] !== "number") continue;
      const bar = el("div", { class: "bar" });
      const fill = el("div", { class: "fill takes_territory" });
      fill.style.width = `${100 * data[key]}%`;
      bar.append(fill);
      rows.push(el("tr", { "data-key": key, "data-value": String(data[key]) },
        el("td", { class: "label", text: label }), el("td", {}, bar),
        el("td", { class: "value", text: pct(data[key]) }), el("td", { class: "ci" })));
    }
    $("#outcomes").replaceChildren(...rows);
    renderNumbers(data, exact);
    const head = ["wave", "army", "sent", "attacker wins", "takes territory", "taken after"];
    const waves = data.waves.map((w, i) => el("tr", {}, el("td", { text: String(i + 1) }),
      el("td", { class: "force", text: w.attacker }), el("td", { "data-label": "sent", text: pct(w.sent) }),
      el("td", { "data-label": "attacker wins", text: pct(w.attacker_win) }),
      el("td", { "data-label": "takes", text: pct(w.takes_territory) }),
      el("td", { "data-label": "taken after", text: pct(w.taken_after) })));
    const counter = data.counterattack;
    $("#plans").replaceChildren(el("h2", { text: "Waves" }), el("table", { class: "plans", id: "wave-table" },
      el("tr", {}, ...head.map((h) => el("th", { text: h }))), ...waves),
      counter ? el("p", { id: "counterattack", text: `counter-attack by ${counter.attacker}: ` +
        `fights ${pct(counter.fights)}, retakes ${pct(counter.retakes)}` }) : null);
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
    // the probability the exact solver left out, where it could show in a percentage (below,
    // it is float noise: 1e-16 on every answer)
    if (data.pruned >= PRUNED_SHOWN) {
      add("pruned", "probability left out (pruned)", `${(100 * data.pruned).toPrecision(2)}%`);
    }
    // result fields this page does not know yet (planner fields, raids, ...) still show
    const known = new Set([...spec.outcomes.map((o) => o[0]), ...spec.options.map((o) => o.name),
      ...Object.keys(spec.army_labels), "rules", "method", "trials", "seed", "sea",
      "elapsed_s", "pruned", "stderr", "ci95", "distributions", "seed_text", "waves",
      "counterattack", "attacker_keeps_at_least", "likely_outcomes", "damage_distribution",
      "target_value", "facility", "aa_fires", "solves", "decisions"]);
    const short = (v) => Number(v.toPrecision(6)).toString();
    // (the outcomes drawn as bars, the waves' among them, are not listed again as fractions)
    const rows = new Set([...document.querySelectorAll("#outcomes tr[data-key]")].map((r) => r.dataset.key));
    for (const [key, value] of Object.entries(data)) {
      if (shown.has(key) || known.has(key) || rows.has(key) || key.endsWith("_survivors")) continue;
      if (key.endsWith("_distribution")) continue;  // drawn as charts
      if (typeof value === "number") add(key, key.replace(/_/g, " "), short(value));
      // {name: number} fields (percentiles, "keeps at least N", ...): one line each
      const entries = value && typeof value === "object" && !Array.isArray(value)
        ? Object.entries(value) : [];
      if (entries.length && entries.every(([, v]) => typeof v === "number")) {
        shown.add(key);
        // percentiles as words: "10% lose at most 6" reads better than p10
        const percentiles = key.endsWith("_percentiles");
        const what = percentiles ? key.replace(/_percentiles$/, "").replace(/_/g, " ")
          .replace(/^(attacker|defender) ipc loss$/, "IPC lost, $1") : key.replace(/_/g, " ");
        const label = percentiles ? `${what} (percentiles)` : what;
        const word = (k) => (/^p\d+$/.test(k) ? `${k.slice(1)}th percentile` : k.replace(/_/g, " "));
        items.push(el("dt", { text: label }), el("dd", { "data-key": key,
          text: entries.map(([k, v]) => `${word(k)}: ${short(v)}`).join(", ") }));
      }
    }
    $("#numbers").replaceChildren(...items);
  }

  // the decisions solved (issue 31): the optimal policy in words, a clause a line, across
  // the results (not a narrow column), its gain over never retreating, and the defender's
  // reactions (scramble, kamikaze) as a table, as the command line prints them
  function renderDecisions(d) {
    const box = $("#decisions");
    box.hidden = !d;
    if (!d) { box.replaceChildren(); return; }
    const parts = [];
    if (d.rule) {
      // "press on while A, or B; otherwise retreat": each clause on its line (the text whole)
      const clauses = d.rule.split(/(?<=, )(?=or )|(?<=; )(?=otherwise )/);
      parts.push(el("h2", { text: `Optimal retreat, for the ${d.objective_text}` }),
        el("p", { class: "rule", "data-key": "decisions.rule" },
          ...clauses.map((c) => el("span", { class: "clause", text: c }))));
    } else if (d.attacker_submerge || d.defender_submerge) {
      parts.push(el("h2", { text: `Optimal submerging, for the ${d.objective_text}` }));
    } else if (d.scramble_from || d.kamikaze) {
      parts.push(el("h2", { text: `The defender's reactions, for the ${d.objective_text}` }));
    }
    for (const side of ["attacker", "defender"]) {
      if (d[`${side}_submerge`]) {
        parts.push(el("p", { "data-key": `decisions.${side}_submerge`,
                             text: `${side} subs submerge optimally: ${d[`${side}_submerge`]}` }));
      }
    }
    const never = d.never_value === null || d.never_value === undefined ? ""
      : `, ${signed(d.never_value)} never retreating: gain ${signed(d.gain)}`;
    parts.push(el("p", { class: "value", "data-key": "decisions.value",
                         text: `${d.objective_text}: ${signed(d.value)}${never ? ` with it${never}` : ""}` }));
    if (d.scramble_from) {
      parts.push(el("p", { "data-key": "decisions.scrambled",
                           text: `${d.scrambled} of ${d.scramble_from} scrambled (${d.reactions_chosen})` }));
    }
    if (d.kamikaze) {
      parts.push(el("p", { "data-key": "decisions.kamikaze_targets",
        text: `kamikaze: ${d.kamikaze} token${d.kamikaze === 1 ? "" : "s"} on ${d.kamikaze_targets} ` +
          `(${d.reactions_chosen})` }));
    }
    const reactions = d.reactions || [];
    if (reactions.length) {
      const columns = [...(d.scramble_from ? [["scrambled", "scrambled", (r) => r.scrambled]] : []),
        ...(d.kamikaze ? [["kamikaze", "kamikaze on", (r) => r.kamikaze_targets]] : []),
        ["attacker_win", "att. wins", (r) => pct(r.attacker_win)],
        ["defender_win", "def. wins", (r) => pct(r.defender_win)],
        ["tuv_swing", "TUV swing", (r) => signed(r.tuv_swing, 2)]];
      const first = columns.length - 3;  // (the choices; then the figures, labelled on a phone)
      const taken = (r) => (!d.scramble_from || r.scrambled === d.scrambled) &&
        (!d.kamikaze || r.kamikaze_targets === d.kamikaze_targets);
      parts.push(el("h3", { text: "The defender's choices weighed (the one taken in bold)" }),
        el("div", { class: "scroll" }, el("table", { class: "reactions" },
          el("tr", {}, ...columns.map(([, label]) => el("th", { text: label }))),
          ...reactions.map((r, i) => el("tr", { "data-key": `decisions.reactions.${i}`,
                                                class: taken(r) ? "taken" : "" },
            ...columns.map(([, label, cell], j) => el("td", { text: cell(r),
              "data-label": j >= first ? label : undefined })))))));
    }
    box.replaceChildren(...parts);
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
      const top = ((laws && laws[side] && laws[side].top) || [])
        .filter((s) => s.probability >= SHOWN_STATE);
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
      charts.push(chart("Keeps at least N units", [
        { name: "attacker", color: "attacker", pairs: atLeast(a.units_left) },
        { name: "defender", color: "defender", pairs: atLeast(d.units_left) }], "at least N units left"));
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
                                   height: Math.max(0, T + plotH - y(p)),
                                   class: s.color in COLORS ? s.color : "neutral" });
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

  // ------------------------------------------------------------------ history, swap, copy

  function readHistory() {
    try {
      const list = JSON.parse(localStorage.getItem(HISTORY_KEY) || "[]");
      return Array.isArray(list) ? list.filter((h) => h && typeof h.query === "string") : [];
    } catch (error) {
      return [];
    }
  }

  // the recent battles, kept in this browser only (localStorage), newest first
  function remember(data) {
    const query = pageQuery().toString();
    let text = `${data.rules}: ${data.attacker || data.pool || ""} vs ${data.defender || data.opponent || ""}`;
    if (typeof data.attacker_win === "number") text += ` \u2014 attacker wins ${pct(data.attacker_win)}`;
    else if (typeof data.takes_territory === "number") text += ` \u2014 takes ${pct(data.takes_territory)}`;
    else if (typeof data.expected_damage === "number") text += ` \u2014 damage ${fixed(data.expected_damage, 2)}`;
    else if (Array.isArray(data.plans)) text = `plan: ${text}`;
    const before = readHistory();
    const named = before.find((h) => h.query === query && h.name);  // (a name stays)
    const entry = named ? { query, text, name: named.name } : { query, text };
    const list = [entry, ...before.filter((h) => h.query !== query)].slice(0, HISTORY_SIZE);
    writeHistory(list);
    showHistory(list);
  }

  function writeHistory(list) {
    try { localStorage.setItem(HISTORY_KEY, JSON.stringify(list)); } catch (error) { /* full */ }
  }

  // a recent battle named by the player ("Karelia, turn 3"): the name shows first, and stays
  // when the battle is run again
  function nameEntry(item, h) {
    const input = el("input", { type: "text", class: "history-name", maxlength: "80",
                                value: h.name || "", "aria-label": "the battle's name",
                                placeholder: "a name for this battle" });
    const save = () => {
      const name = input.value.trim();
      writeHistory(readHistory().map((e) => (e.query === h.query
        ? { query: e.query, text: e.text, ...(name ? { name } : {}) } : e)));
      showHistory();
    };
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter") { e.preventDefault(); save(); }
      if (e.key === "Escape") showHistory();
    });
    input.addEventListener("blur", save);
    item.replaceChildren(input);
    input.focus();
  }

  function showHistory(list = readHistory()) {
    const box = $("#history");
    if (!list.length) { box.replaceChildren(); return; }
    box.replaceChildren(el("h2", { text: "Recent battles" }), el("ol", {}, ...list.map((h) => {
      const item = el("li", { "data-query": h.query });
      item.append(el("a", { href: `${location.pathname}?${h.query}`,
        onclick: (e) => {
          e.preventDefault();
          readQuery(`?${h.query}`);
          buildForm();
          changed();
        } }, ...(h.name ? [el("strong", { class: "name", text: h.name }), " \u2014 "] : []), h.text),
      " ", el("button", { type: "button", class: "rename", text: h.name ? "rename" : "name",
                          "aria-label": `name this battle: ${h.text}`,
                          onclick: () => nameEntry(item, h) }));
      return item;
    })),
      el("button", { type: "button", id: "forget", text: "forget these",
        onclick: () => { localStorage.removeItem(HISTORY_KEY); showHistory([]); } }));
  }

  // ------------------------------------------------------------------ the board of a save

  // a TripleA save, chosen or dropped: its board (POST /api/game: every battle solved)
  async function readSave(file) {
    const status = $("#game-status");
    status.textContent = `reading ${file.name}\u2026`;
    let data;
    try {
      const response = await fetch("/api/game", { method: "POST", body: file, cache: "no-store",
        headers: { "Content-Type": "application/octet-stream", ...CLIENT_HEADER } });
      data = await response.json();
      if (!response.ok) {
        status.textContent = data.error ? pageMessage(data.error) : `HTTP ${response.status}`;
        return;
      }
    } catch (error) {
      status.textContent = `no answer from the server (${error.message})`;
      return;
    }
    status.textContent = `${data.game}, round ${data.round}` +
      (data.player ? `, ${data.player} to move` : "") +
      (data.battles.length ? "" : ": no battle pending");
    renderBoard(data, { file: file.name, title: `The save ${file.name}` });
    // the form shows the save's battle most at stake (its odds the big ones), not the one
    // it held before
    const first = mostAtStake(data);
    if (first) loadBattle(first, data, file.name);
    planTurn({ file });
  }

  // a battle of the board into the form, as it stands (its query), its nations named
  function loadBattle(b, board, file, live = false) {
    readQuery(`?${b.query}`, { territory: b.territory, file, stands: b.stands,
                               attacker_nations: b.attacker_nations,
                               defender_nations: b.defender_nations, live,
                               game: board.game });
    buildForm();
    changed();
  }

  // the battle of a board most at stake that the form runs (solved), or none
  const mostAtStake = (board) => (board.by_stake || [])
    .map((t) => board.battles.find((b) => b.territory === t)).find((b) => b && b.query && b.odds);

  // the board: the game, the turn in one line, each pending battle by what is at stake (TUV
  // at risk) with its odds and expected swing, what changed since the save before, the luck
  // so far and a picker for any territory (a dropped save's board, or the live one)
  function renderBoard(board, how = {}) {
    const section = $("#board");
    section.hidden = false;
    section.dataset.file = board.file || how.file || "";
    $("#board-title").textContent = how.title || "Live board";
    $("#board-summary").replaceChildren(
      el("span", { text: `${board.game} (${board.edition}), round ${board.round}, step ` +
        `${board.step}${board.low_luck ? ", low luck" : ""}` }), el("br"),
      el("span", { id: "turn-summary", text: board.summary || "" }));
    const changes = board.changes || {};
    const gone = changes.gone || [];
    const since = changes.since;
    const changeBox = $("#board-changes");
    const other = changes.other;  // a save of another game: nothing compared
    changeBox.textContent = other ? `A save of another game: ${board.game} (${board.edition}) ` +
      `after ${other.game} (${other.edition}${other.file ? `, ${other.file}` : ""}); nothing ` +
      "compared with it"
      : since ? `Since the last save (${since.file || "?"}, round ${since.round}, ` +
      `${since.step}): ${gone.length ? `${gone.join(", ")} no longer pending` : "no battle ended"}` : "";
    changeBox.hidden = !since && !other;
    const byTerritory = new Map(board.battles.map((b) => [b.territory, b]));
    const order = (board.by_stake || board.battles.map((b) => b.territory))
      .map((t) => byTerritory.get(t)).filter(Boolean);
    $("#game-battles").replaceChildren(...order.map((b) => battleCard(b, board, how.file || board.file,
                                                                      how.live)));
    if (!order.length) $("#game-battles").append(el("li", { class: "none", text: "no battle pending" }));
    renderLuck(board.luck);
    renderPicker(board, how.file || board.file);
  }

  function battleCard(b, board, file, live = false) {
    const text = `${b.territory} (${b.kind}${b.in_progress ? ", in progress" : ""})`;
    const card = el("li", { class: `board-battle${b.change ? ` ${b.change}` : ""}`,
                            "data-territory": b.territory, "data-stake": String(b.tuv_at_risk ?? "") });
    const title = b.query
      ? el("a", { href: `${location.pathname}?${b.query}`, class: "game-battle",
                  "data-territory": b.territory, text,
                  onclick: (e) => { e.preventDefault(); loadBattle(b, board, file, live); } })
      : el("span", { class: "game-battle-off", text: `${text} \u2014 not a battle this form runs` });
    card.append(el("div", { class: "card-head" }, title,
      b.change ? el("span", { class: "badge", text: b.change === "new" ? "new" : "changed" }) : null,
      el("span", { class: "stake", text: `${b.tuv_at_risk ?? 0} TUV at risk` })),
    el("div", { class: "sides" }, el("span", { class: "attacker-side", text: `${b.attacker_nations.map(nationWords).join(", ")}: ` +
      [b.attacker && (b.landing ? `${b.attacker} overland or by air` : b.attacker),
       b.landing && `${b.landing} landing from transports`].filter(Boolean).join(" and ") +
      (b.bombard ? ` (bombarding: ${b.bombard})` : "") }),
    " vs ", el("span", { class: "defender-side",
      text: `${b.defender_nations.map(nationWords).join(", ") || "nobody"}: ${b.defender || "nothing"}` })));
    if (b.stands) card.append(el("div", { class: "stands", text: `in progress: ${b.stands}` }));
    if (b.scramble_from) {  // the air bases in reach: solved with the defender's best scramble
      card.append(el("div", { class: "scramble", text: "may scramble: " + b.scramble_from.map((base) =>
        `${base.territory} ${Object.entries(base.aircraft).map(([u, n]) => `${n} ${u}`).join(", ")}`).join("; ") }));
    }
    const odds = b.odds;
    if (odds && odds.expected_damage !== null && odds.expected_damage !== undefined) {
      card.append(el("div", { class: "odds" }, "expected damage ",
        el("strong", { class: "attacker", "data-key": "expected_damage",
                       "data-value": String(odds.expected_damage), text: `${fixed(odds.expected_damage, 2)} IPC` }),
        ` \u00b7 attacking aircraft lost ${fixed(odds.attacker_ipc_loss, 2)} IPC \u00b7 expected swing `,
        el("strong", { "data-key": "tuv_swing", "data-value": String(odds.tuv_swing),
                       text: `${signed(odds.tuv_swing, 2)} TUV` }),
        el("span", { class: "method", text: ` (${odds.method})` })));
    } else if (odds) {
      const bar = el("div", { class: "glance" });
      for (const [cls, p] of [["attacker_win", odds.attacker_win],
        ["rest", 1 - odds.attacker_win - odds.defender_win], ["defender_win", odds.defender_win]]) {
        const cell = el("span", { class: cls });
        cell.style.width = `${100 * Math.max(0, p)}%`;
        bar.append(cell);
      }
      card.append(el("div", { class: "odds" },
        "attacker wins ", el("strong", { class: "attacker", "data-key": "attacker_win",
                                          "data-value": String(odds.attacker_win), text: pct(odds.attacker_win) }),
        " \u00b7 expected swing ", el("strong", { "data-key": "tuv_swing", "data-value": String(odds.tuv_swing),
                                                  text: `${signed(odds.tuv_swing, 2)} TUV` }),
        el("span", { class: "method", text: ` (${odds.method})` })), bar);
    } else if (b.query && !b.error) {
      card.append(el("div", { class: "odds pending", text: "solving\u2026" }));
    }
    for (const line of b.changed || []) {
      if (b.change === "changed") card.append(el("div", { class: "what-changed", text: line }));
    }
    for (const line of [b.note, b.error, ...(b.warnings || []).map((w) => `Warning: ${w}`)]) {
      if (line) card.append(el("div", { class: "note", text: line }));
    }
    return card;
  }

  // a z score in words: how many standard deviations the hits lie from the expected ones
  // ("1.71 standard deviations below expected: unlucky"); short: "1.71 sd below"
  function luckWords(z, short = false) {
    const size = Math.abs(z).toFixed(2);
    if (Math.abs(z) < 0.005) return short ? "as expected" : "exactly as many hits as expected";
    const side = z < 0 ? "below" : "above";
    if (short) return `${size} sd ${side}`;
    const verdict = Math.abs(z) < 1 ? "within ordinary luck" : z < 0 ? "unlucky" : "lucky";
    return `${size} standard deviations ${side} the expected hits (${verdict})`;
  }

  // a TripleA player id as a player reads it: its neutrals by what they are, not by the map's
  // player ids (Neutral_True), an underscore as a space (UK_Pacific)
  const NEUTRALS = { Neutral: "neutral", Neutral_True: "strict neutral",
                     Neutral_Allies: "pro-Allies neutral", Neutral_Axis: "pro-Axis neutral" };
  const nationWords = (id) => NEUTRALS[id] || String(id).replace(/_/g, " ");

  function renderLuck(luck) {
    const view = $("#luck-view");
    $("#luck").hidden = !luck;
    if (!luck) { view.replaceChildren(); return; }
    if (luck.error) { view.replaceChildren(el("p", { class: "note", text: luck.error })); return; }
    const all = luck.dice || {};
    $("#luck summary").textContent = all.dice
      ? `Luck so far: ${all.hits} hit${all.hits === 1 ? "" : "s"} of ${all.dice} dice, ` +
        `${fixed(all.expected_hits, 2)} expected${all.z === null ? "" : `: ${luckWords(all.z)}`}`
      : "Luck so far: no combat dice yet";
    const row = (name, t) => el("tr", { "data-nation": name },
      el("td", { text: name === "all" ? name : nationWords(name) }), el("td", { text: String(t.dice) }),
      el("td", { text: String(t.hits) }),
      el("td", { text: fixed(t.expected_hits, 2) }),
      el("td", { text: t.z === null || t.z === undefined ? "" : luckWords(t.z, true) }));
    const parts = [el("div", { class: "scroll" }, el("table", { class: "luck-dice" },
      el("tr", {}, ...["combat dice", "dice", "hits", "expected", "luck"].map((h) => el("th", { text: h }))),
      row("all", luck.dice), ...Object.entries(luck.dice_by_nation || {}).map(([n, t]) => row(n, t))))];
    if (luck.other_rolls && luck.other_rolls.rolls) {
      parts.push(el("p", { class: "note", text: `other rolls (technology): ${luck.other_rolls.rolls} ` +
        `rolls, ${luck.other_rolls.dice} dice, ${luck.other_rolls.hits} hits` }));
    }
    const battles = luck.battles || [];
    parts.push(battles.length ? el("ol", { class: "luck-battles" }, ...battles.map((j) => el("li", {},
      `round ${j.round} ${j.territory}: expected swing ${signed(j.expected_tuv_swing, 2)}, actual ` +
      `${signed(j.actual_tuv_swing, 0)}, percentile ${fixed(j.percentile, 3)}`)))
      : el("p", { class: "note", text: (luck.pending || []).length ? "no battle judged yet"
        : "no battle fought in the history" }));
    for (const p of luck.pending || []) {
      parts.push(el("p", { class: "note", text: `round ${p.round} ${p.territory}: not judged (${p.reason})` }));
    }
    view.replaceChildren(...parts);
  }

  // any territory or sea zone of the save: its units load as the defender of a battle of its
  // kind (what `battlecalc game SAVE --territory T --attack A` solves, given the attack)
  function renderPicker(board, file) {
    const places = (board.territories || []).filter((t) => t.query);
    const select = $("#territory");
    $("#picker").hidden = !places.length;
    const option = (t) => el("option", { value: t.name,
      text: `${t.name}${t.owner && !(t.water && t.owner === "Neutral") ? ` (${nationWords(t.owner)})` : ""}` +
        `: ${t.units || "empty"}` });
    const sorted = (list) => [...list].sort((u, v) => u.name.localeCompare(v.name));
    select.replaceChildren(el("option", { value: "", text: "(choose a territory)" }),
      el("optgroup", { label: "Land" }, ...sorted(places.filter((t) => !t.water)).map(option)),
      el("optgroup", { label: "Sea" }, ...sorted(places.filter((t) => t.water)).map(option)));
    select.onchange = () => {
      const t = places.find((p) => p.name === select.value);
      if (!t) return;
      readQuery(`?${t.query}`, { territory: t.name, file, defender_nations: t.nations });
      buildForm();
      changed();
    };
  }

  // the live board (serve --watch): its states as server-sent events, read with the page's
  // header; the stream ends with the server, the page follows again a moment later
  async function follow() {
    for (;;) {
      try {
        const response = await fetch("/api/watch", { headers: CLIENT_HEADER, cache: "no-store" });
        if (response.ok) {
          const reader = response.body.getReader();
          const decoder = new TextDecoder();
          let buffered = "";
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            buffered += decoder.decode(value, { stream: true });
            const blocks = buffered.split("\n\n");
            buffered = blocks.pop();
            for (const block of blocks) {
              const data = block.split("\n").filter((l) => l.startsWith("data:"))
                .map((l) => l.slice(5).trim()).join("\n");
              if (data) showLive(JSON.parse(data));
            }
          }
        } else {
          $("#board-status").textContent = `the board is not available (HTTP ${response.status})`;
        }
      } catch (error) {
        $("#board-status").textContent = "the server is not answering; trying again\u2026";
      }
      await new Promise((done) => setTimeout(done, 1500));
    }
  }

  // the first board of a page opened on no battle loads its battle most at stake
  let loadFirst = false;

  function showLive(live) {
    const section = $("#board");
    section.hidden = false;
    if (live.board) renderBoard(live.board, { live: true });
    else {
      // an empty folder: what to do
      $("#board-title").textContent = "Live board";
      $("#board-summary").replaceChildren(el("span", { id: "board-empty", text:
        `No save in ${live.watching} yet. TripleA writes its autosaves there as a game is ` +
        "played (at each battle and turn): start or load a game in TripleA, copy a save " +
        "(.tsvg) into the folder, or drop one on this page." }));
      $("#game-battles").replaceChildren();
    }
    $("#board-status").textContent = live.status + (live.notes && live.notes.length
      ? ` \u2014 ${live.notes[live.notes.length - 1]}` : "");
    section.dataset.version = String(live.version);
    const board = live.board;
    // a new save of the watched folder: its plan (once solved, the board's summary there)
    const planKey = board && board.summary ? `${board.file}|${board.modified}` : null;
    if (planKey && !(planSource && planSource.live === planKey)) planTurn({ live: planKey });
    const first = board && mostAtStake(board);
    if (loadFirst && first) {
      loadFirst = false;
      loadBattle(first, board, board.file, true);
    }
    if (board) markGone(board);
  }

  // the form's battle, loaded from the live board, no longer pending in its newest save:
  // said where the form says where it comes from (the form keeps it, as it stood)
  function markGone(board) {
    const from = state.from;
    if (!from || !from.live || !from.territory) return;
    const pending = board.battles.some((b) => b.territory === from.territory);
    const sameSave = from.file === board.file;
    from.gone = !pending && !sameSave ? board.file : null;
    showStart();
  }

  // ------------------------------------------------------------------ the plan of the turn

  // "Plan this turn": the combat move worth the most for the player to move in the dropped
  // or watched save (/api/turn/plan, its progress streamed), with the counter-attack model,
  // the objective and min-win as controls; each battle a card that loads into the form
  let planSource = null;  // { file } (a dropped save) or { live: key } (the watched one)
  let planRequest = null;

  function turnPlanParams() {
    const params = new URLSearchParams();
    const counter = $("#plan-counter").value;
    const objective = $("#plan-objective").value;
    if (objective === "hold" && counter === "none") $("#plan-counter").value = "max";
    params.set("counter", $("#plan-counter").value);
    params.set("objective", objective);
    params.set("min_win", $("#plan-min-win").value || "0.8");
    return params;
  }

  async function planTurn(source) {
    planSource = source;
    if (planRequest) planRequest.abort();
    const controller = new AbortController();
    planRequest = controller;
    const section = $("#turn-plan");
    section.hidden = false;
    section.dataset.state = "planning";
    const progress = $("#plan-progress");
    const started = Date.now();
    progress.textContent = "planning\u2026";
    const url = `/api/turn/plan?${turnPlanParams()}`;
    const init = { signal: controller.signal, cache: "no-store",
                   headers: { ...CLIENT_HEADER, Accept: "application/x-ndjson" } };
    if (source.file) Object.assign(init, { method: "POST", body: source.file,
      headers: { ...init.headers, "Content-Type": "application/octet-stream" } });
    let last = null;
    try {
      const response = await fetch(url, init);
      if (!(response.headers.get("content-type") || "").includes("ndjson")) {
        const data = await response.json();
        last = { status: response.status, ...data };
      } else {
        await readLines(response, (line) => {
          const message = JSON.parse(line);
          if (message.progress !== undefined) {
            progress.textContent = `planning: ${message.progress} ` +
              `(${((Date.now() - started) / 1000).toFixed(0)} s)`;
          } else last = message;
        });
      }
    } catch (error) {
      if (controller.signal.aborted) return;
      last = { status: 0, error: `no answer from the server (${error.message})` };
    }
    if (planRequest !== controller) return;
    planRequest = null;
    if (!last || last.status !== 200) {
      section.dataset.state = "error";
      progress.textContent = last && last.error ? pageMessage(last.error) : "no plan";
      $("#plan-summary").textContent = "";
      $("#plan-battles").replaceChildren();
      $("#plan-moves").replaceChildren();
      return;
    }
    renderTurnPlan(last.result, source.file ? source.file.name : null);
    section.dataset.state = "done";
  }

  function renderTurnPlan(plan, file) {
    $("#plan-title").textContent = `Plan this turn: the ${plan.player}`;
    $("#plan-progress").textContent = `${plan.battles_solved} battles solved in ` +
      `${plan.seconds.toFixed(1)} s`;
    $("#plan-summary").replaceChildren(
      el("span", { text: "worth " }),
      el("strong", { id: "plan-value", "data-value": String(plan.value),
                     text: `${fixed(plan.value, 3)} IPC` }),
      el("span", { text: ` (${plan.objective}; every attack takes with P \u2265 ` +
        `${plan.min_win}; counter-attack ${plan.counter}) \u2014 ` +
        (plan.proven_optimal ? "proven optimal" : `not proven optimal: ${plan.why}`) +
        (plan.greedy === null ? "" : `; the greedy baseline: ${fixed(plan.greedy, 3)}`) }));
    const cards = plan.battles.map((b) => turnPlanCard(b, plan, file));
    $("#plan-battles").replaceChildren(...cards);
    if (!cards.length) {
      $("#plan-battles").append(el("li", { class: "none", text: "no attack is worth making" }));
    }
    const moves = plan.moves.map((m) => el("li", { "data-to": m.to,
      text: `${m.count} ${m.unit}: ${m.from} \u2192 ${m.to}` }));
    $("#plan-moves").replaceChildren(...(moves.length ? moves
      : [el("li", { class: "none", text: "none" })]));
  }

  function turnPlanCard(b, plan, file) {
    const army = (counts) => Object.entries(counts).map(([u, n]) => `${n} ${u}`).join(", ");
    const card = el("li", { class: "board-battle plan-battle", "data-territory": b.target,
                            "data-value": String(b.value) });
    const title = b.query
      ? el("a", { href: `${location.pathname}?${b.query}`, class: "game-battle", text: b.target,
                  onclick: (e) => {
                    e.preventDefault();
                    readQuery(`?${b.query}`, { territory: b.target, file,
                      attacker_nations: b.battle ? [plan.player] : b.defender_nations,
                      defender_nations: b.battle ? b.defender_nations : [plan.player] });
                    buildForm();
                    changed();
                  } })
      : el("span", { class: "game-battle-off", text: b.target });
    card.append(el("div", { class: "card-head" }, title,
      el("span", { class: "stake", text: `value ${fixed(b.value, 3)}` })));
    card.append(el("div", { class: "sides" },
      el("span", { class: "attacker-side", text: `${plan.player}: ${army(b.attackers)}` }),
      " vs ", el("span", { class: "defender-side", text: `${b.defender_nations.join(", ") ||
        b.owner}: ${army(b.defenders) || "nobody (walks in)"}` })));
    const from = Object.entries(b.from).map(([t, units]) => `${t}: ${army(units)}`);
    if (Object.keys(b.committed).length) from.push(`already there: ${army(b.committed)}`);
    card.append(el("div", { class: "stands", text: `from ${from.join("; ")}` }));
    const odds = el("div", { class: "odds" }, "P(take) ",
      el("strong", { class: "attacker", "data-key": "p_take", "data-value": String(b.p_take),
                     text: pct(b.p_take) }));
    if (b.p_hold !== null) {
      odds.append(" \u00b7 P(hold) ", el("strong", { "data-key": "p_hold",
        "data-value": String(b.p_hold), text: pct(b.p_hold) }));
    }
    odds.append(" \u00b7 expected swing ", el("strong", { "data-key": "swing",
      "data-value": String(b.swing), text: `${signed(b.swing, 2)} TUV` }));
    card.append(odds);
    if (b.counter !== null) {
      card.append(el("div", { class: "note counter", text: Object.keys(b.counter).length
        ? `counter-attack: ${army(b.counter)}` : "counter-attack: no enemy unit in reach" }));
    }
    return card;
  }

  const SIDES = [["attacker", "defender"], ["attacker_tech", "defender_tech"],
                 ["attacker_ool", "defender_ool"], ["attacker_submerge", "defender_submerge"],
                 ["attacker_level", "defender_level"]];

  // the defender attacks, the attacker defends (units the new attacker cannot attack with,
  // such as AA guns, stay out of its steppers and are dropped)
  function swapSides() {
    const a = state.armies.attacker || {};
    state.armies.attacker = state.armies.defender || {};
    state.armies.defender = a;
    const raw = state.raw;
    state.raw = {};
    if (raw.attacker !== undefined) state.raw.defender = raw.attacker;
    if (raw.defender !== undefined) state.raw.attacker = raw.defender;
    for (const [x, y] of SIDES.slice(1)) {
      [state.options[x], state.options[y]] = [state.options[y], state.options[x]];
    }
    const offered = edition().roles[state.kind] || {};
    const left = [];
    for (const role of ["attacker", "defender"]) {
      const names = new Set(offered[role] || []);
      const counts = state.armies[role];
      const out = {};
      for (const name of Object.keys(counts)) {
        if (!names.has(name)) { out[name] = counts[name]; delete counts[name]; }
      }
      if (Object.keys(out).length) {
        left.push(`${formatArmy(out)} (the ${role} cannot have ${Object.keys(out).length > 1
          ? "them" : "it"} in a ${kind().label.toLowerCase()} battle)`);
      }
    }
    state.note = left.length ? `Swap sides left out ${left.join("; ")}.` : "";
    buildForm();
    changed();
  }

  async function copyLink() {
    const url = location.href;
    try {
      await navigator.clipboard.writeText(url);
      $("#status").textContent = "link copied";
    } catch (error) {
      $("#status").textContent = "copy the address bar's link (the browser did not allow copying)";
    }
    $("#copy").dataset.copied = url;
  }

  // ------------------------------------------------------------------ start

  async function start() {
    const response = await fetch("/api/spec", { cache: "no-store" });
    spec = await response.json();
    readQuery(location.search);
    buildForm();
    if (spec.limits && spec.limits.watching) {
      loadFirst = !location.search.replace(/^\?/, "");
      follow();
    }
    $("#rules").addEventListener("change", (e) => {
      const previous = state.armies;
      state.rules = e.target.value;
      const kinds = kindsOf(edition()).map((k) => k.id);
      if (!kinds.includes(state.kind)) state.kind = kinds[0];
      // keep the units the new edition also has, and say which it has not
      const names = new Set(edition().units.map((u) => u.name));
      state.armies = {};
      const left = [];
      for (const [role, counts] of Object.entries(previous)) {
        state.armies[role] = Object.fromEntries(Object.entries(counts).filter(([n]) => names.has(n)));
        const out = Object.entries(counts).filter(([n, c]) => c > 0 && !names.has(n))
          .map(([n, c]) => `${c} ${n.replace(/_/g, " ")}`);
        if (out.length && rolesOf().includes(role)) left.push(`${out.join(", ")} (${armyLabel(role).toLowerCase()})`);
      }
      const techs = [state.options.attacker_tech, state.options.defender_tech].some((t) => t);
      state.raw = {};
      state.options.attacker_tech = "";
      state.options.defender_tech = "";
      state.from = null;
      state.note = [left.length ? `${edition().name} has no ${left.join("; ")}: left out.` : "",
        techs ? "Technologies cleared (each edition has its own)." : ""].filter(Boolean).join(" ");
      buildForm();
      changed();
    });
    $("#swap").addEventListener("click", swapSides);
    $("#save-file").addEventListener("change", (e) => {
      if (e.target.files.length) readSave(e.target.files[0]);
    });
    document.addEventListener("dragover", (e) => {
      if ([...e.dataTransfer.types].includes("Files")) e.preventDefault();
    });
    document.addEventListener("drop", (e) => {
      if (!e.dataTransfer.files.length) return;
      e.preventDefault();
      readSave(e.dataTransfer.files[0]);
    });
    for (const control of ["#plan-counter", "#plan-objective", "#plan-min-win"]) {
      $(control).addEventListener("change", () => { if (planSource) planTurn(planSource); });
    }
    $("#copy").addEventListener("click", copyLink);
    $("#stop").addEventListener("click", stopRun);
    $("#share").addEventListener("click", (e) => { e.preventDefault(); copyLink(); });
    showHistory();
    $("#clear").addEventListener("click", () => {
      state.armies = {};
      state.raw = {};
      state.note = "";
      buildArmies();
      changed();
    });
    changed();
  }

  start().catch((error) => showError(`the page could not start: ${error.message}`));
})();
