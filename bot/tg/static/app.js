/* interview-bot Mini App: plain JS, no build step. Every API call carries the Telegram-signed
   initData ("Authorization: tma ..."); the server takes the user from it and from nothing else. */
"use strict";
(function () {
  var S = {};          // the interface strings (bot/locales/*.webapp.yaml), from /app/api/me
  var ME = null;
  var INIT = "";
  var stack = [];      // screens to go back to
  var current = null;  // the screen shown: {tab, render}
  var main = document.getElementById("main");
  var tabs = document.getElementById("tabs");
  var TG = null;

  function t(key, values) {
    var s = S[key] || key;
    if (values) Object.keys(values).forEach(function (k) { s = s.split("{" + k + "}").join(String(values[k])); });
    return s;
  }

  function h(tag, attrs) {
    var el = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) {
      var v = attrs[k];
      if (v === null || v === undefined || v === false) return;
      if (k === "text") el.textContent = v;
      else if (k === "html") el.innerHTML = v;  // only bank HTML rendered (and escaped) by the server
      else if (k.slice(0, 2) === "on") el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? "" : v);
    });
    for (var i = 2; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined || c === false) continue;
      if (Array.isArray(c)) c.forEach(function (x) { if (x) el.appendChild(typeof x === "string" ? document.createTextNode(x) : x); });
      else el.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    }
    return el;
  }

  function toast(text) {
    var el = document.getElementById("toast");
    el.textContent = text; el.hidden = false;
    clearTimeout(toast.timer);
    toast.timer = setTimeout(function () { el.hidden = true; }, 3500);
  }

  function api(path, options) {
    options = options || {};
    var headers = { "Authorization": "tma " + INIT };
    if (options.body) headers["Content-Type"] = "application/json";
    return fetch("api/" + path, { method: options.method || "GET", headers: headers, body: options.body })
      .then(function (r) {
        return r.json().catch(function () { return {}; }).then(function (data) { data._status = r.status; return data; });
      });
  }

  // Launch parameters: Telegram passes them in the URL's fragment (#tgWebAppData=...&tgWebAppThemeParams=...)
  function launchParams() {
    var hash = location.hash.slice(1);
    var p = new URLSearchParams(hash);
    return { data: p.get("tgWebAppData") || "", theme: p.get("tgWebAppThemeParams") || "", platform: p.get("tgWebAppPlatform") || "" };
  }

  function applyTheme(params) {
    if (!params) return;
    var root = document.documentElement;
    root.classList.add("tg");
    Object.keys(params).forEach(function (k) {
      if (/^[a-z_]+$/.test(k) && /^#[0-9a-fA-F]{3,8}$/.test(params[k])) root.style.setProperty("--tg-theme-" + k.replace(/_/g, "-"), params[k]);
    });
    var bg = params.bg_color;
    if (bg && bg.length === 7) {
      var n = parseInt(bg.slice(1), 16), lum = 0.299 * (n >> 16) + 0.587 * ((n >> 8) & 255) + 0.114 * (n & 255);
      if (lum < 128) root.classList.add("dark");
    }
  }

  function loadTelegramScript() {
    var s = document.createElement("script");
    s.src = "https://telegram.org/js/telegram-web-app.js";
    s.onload = function () {
      TG = window.Telegram && window.Telegram.WebApp;
      if (!TG) return;
      TG.ready(); TG.expand();
      if (TG.themeParams) applyTheme(TG.themeParams);
      TG.onEvent("themeChanged", function () { applyTheme(TG.themeParams); });
      TG.BackButton.onClick(back);
      syncBack();
    };
    document.head.appendChild(s);
  }

  function syncBack() {
    if (TG && TG.BackButton) { if (stack.length) TG.BackButton.show(); else TG.BackButton.hide(); }
  }

  // Navigation ------------------------------------------------------------------------------------
  // mode: "root" (a tab: the history starts again), "push" (a page opened from this one), "back"
  function show(screen, mode) {
    if (mode === "push" && current) stack.push(current);
    if (mode === "root") stack = [];
    current = screen;
    Array.prototype.forEach.call(tabs.children, function (b) { b.setAttribute("aria-selected", String(b.dataset.tab === screen.tab)); });
    main.replaceChildren(h("p", { class: "muted", text: t("loading") }));
    syncBack();
    Promise.resolve(screen.render()).then(function (nodes) {
      if (current !== screen) return;
      main.replaceChildren.apply(main, [].concat(stack.length ? [backButton()] : [], nodes.filter(Boolean)));
      if (mode !== "root") main.focus();
      window.scrollTo(0, 0);
    }).catch(function (err) {
      if (current !== screen) return;
      main.replaceChildren(h("p", { class: "weak", text: err && err.unauthorized ? t("unauthorized") : t("error") }));
    });
  }

  function back() { if (stack.length) show(stack.pop(), "back"); }
  function backButton() { return h("button", { class: "link", type: "button", onclick: back, text: "← " + t("back") }); }
  function go(tab, render) { return { tab: tab, render: render }; }

  function get(path) {
    return api(path).then(function (d) {
      if (d._status === 401) throw { unauthorized: true };
      if (d._status >= 400) throw { status: d._status };
      return d;
    });
  }

  // A day ("2026-12-07") as the user's language writes it: «7 дек.», "Dec 7".
  function day(iso, options) {
    try {
      return new Intl.DateTimeFormat(ME.lang, Object.assign({ timeZone: "UTC" }, options || { day: "numeric", month: "short" }))
        .format(new Date(iso.slice(0, 10) + "T00:00:00Z"));
    } catch (e) { return iso; }
  }

  // Progress --------------------------------------------------------------------------------------
  function level(n, max) { if (!n) return 0; var r = n / max; return r > 0.75 ? 4 : r > 0.5 ? 3 : r > 0.25 ? 2 : 1; }

  function heatmap(hm) {
    var start = new Date(hm.start + "T00:00:00Z"), end = new Date(hm.end + "T00:00:00Z");
    var max = 0; Object.keys(hm.days).forEach(function (d) { max = Math.max(max, hm.days[d]); });
    var grid = h("div", { class: "heat", id: "heatmap", role: "img", "aria-label": t("progress.active_days", { n: hm.active_days }) });
    for (var d = new Date(start); d <= end; d.setUTCDate(d.getUTCDate() + 1)) {
      var key = d.toISOString().slice(0, 10), n = hm.days[key] || 0;
      grid.appendChild(h("span", { class: "cell l" + level(n, max) + (n ? " on" : ""), title: day(key, { day: "numeric", month: "long", year: "numeric" }) + ": " + n, "data-count": String(n) }));
    }
    var legend = h("div", { class: "legend" }, t("progress.less"), [0, 1, 2, 3, 4].map(function (l) { return h("span", { class: "cell l" + l }); }), t("progress.more"));
    return h("section", { class: "card" }, h("h2", { text: t("progress.heatmap") }), grid, legend,
      h("p", { class: "muted", id: "active-days", text: t("progress.active_days", { n: hm.active_days }) }));
  }

  function progressScreen() {
    return get("progress").then(function (p) {
      var out = [];
      if (!p.totals.answers) out.push(h("p", { class: "card", text: t("progress.empty") }));
      out.push(heatmap(p.heatmap));
      out.push(h("section", { class: "card row" },
        h("div", { class: "stat" }, h("span", { class: "muted", text: t("progress.streak") }), h("b", { id: "streak", text: t("progress.streak_days", { n: p.streak.current }) })),
        h("div", { class: "stat" }, h("span", { class: "muted", text: t("progress.longest") }), h("b", { text: t("progress.streak_days", { n: p.streak.longest }) })),
        h("p", { class: "muted", style: "flex-basis:100%;margin:0", text: t("progress.totals", p.totals) })));
      out.push(h("section", { class: "card" }, h("h2", { text: t("progress.due") }),
        h("div", { class: "row" }, h("div", { class: "stat" }, h("span", { class: "muted", text: t("progress.due_today") }), h("b", { id: "due-now", text: String(p.due.now) })),
          h("div", { class: "stat" }, h("span", { class: "muted", text: t("progress.due_week") }), h("b", { text: String(p.due.week_total) }))),
        h("div", { class: "week" }, p.due.week.map(function (d) { return h("div", null, h("span", { class: "muted", text: day(d.date) }), h("b", { text: String(d.count) })); }))));
      out.push(h("section", { class: "card" }, h("h2", { text: t("progress.mastery") }), h("p", { class: "muted", text: t("progress.mastery_hint") }),
        h("ul", { class: "list" }, p.topics.map(function (tp) {
          return h("li", { style: "padding:6px 0" }, h("div", { class: "row", style: "justify-content:space-between" },
            h("span", { text: tp.title }), h("span", { class: "muted", text: tp.mastery + "% · " + t("progress.answered", tp) })),
            h("div", { class: "bar", role: "progressbar", "aria-valuenow": String(tp.mastery), "aria-valuemin": "0", "aria-valuemax": "100", "aria-label": tp.title },
              h("span", { style: "width:" + tp.mastery + "%" })));
        }))));
      out.push(h("section", { class: "card" }, h("h2", { text: t("progress.weakest") }),
        p.weakest.length ? h("ul", { class: "list" }, p.weakest.map(function (w) {
          return h("li", null, h("button", { type: "button", onclick: function () { openQuestion(w.question.id); } },
            h("div", { text: w.point }), h("div", { class: "muted", text: label(w.question) + " · " + t("progress.weakest_missed", w) })));
        })) : h("p", { class: "muted", text: t("progress.weakest_none") })));
      return out;
    });
  }

  // The bank --------------------------------------------------------------------------------------
  function label(q) { return (q.label ? (/^\d+$/.test(q.label) ? "№" : "") + q.label + " " : "") + q.text; }

  function questionList(qs) {
    return h("ul", { class: "list questions" }, qs.map(function (q) {
      return h("li", null, h("button", { type: "button", class: "qitem", "data-id": q.id, onclick: function () { openQuestion(q.id); } },
        h("span", { text: label(q) }), q.answered ? h("span", { class: "badge", text: t("bank.answered_mark") }) : null,
        h("div", { class: "muted", text: q.topic + " · " + "★★★".slice(0, q.difficulty) })));
    }));
  }

  function searchForm(value) {
    var input = h("input", { type: "search", name: "q", id: "search", value: value || "", placeholder: t("bank.search"), "aria-label": t("bank.search"), maxlength: "200" });
    return h("form", { class: "search", role: "search", onsubmit: function (e) {
      e.preventDefault();
      var q = input.value.trim();
      if (q) show(go("bank", function () { return searchScreen(q); }), "push");
    } }, input, h("button", { class: "btn", type: "submit", text: t("bank.search_button") }));
  }

  function bankScreen() {
    return get("topics").then(function (d) {
      // topics in syllabus order; the topics of an area with more than one get its title above them
      var sizes = {};
      d.topics.forEach(function (tp) { if (tp.area) sizes[tp.area.id] = (sizes[tp.area.id] || 0) + 1; });
      var items = [], last = null;
      d.topics.forEach(function (tp) {
        var area = tp.area && sizes[tp.area.id] > 1 ? tp.area : null;
        if (area && area.id !== last) items.push(h("li", { class: "area muted", role: "presentation", text: area.title }));
        else if (!area && last) items.push(h("li", { class: "area", role: "presentation" }));  // the group ends
        last = area ? area.id : null;
        items.push(h("li", null, h("button", { type: "button", onclick: function () { show(go("bank", function () { return topicScreen(tp.id); }), "push"); } },
          h("span", { text: tp.title }), h("span", { class: "badge", text: tp.answered + "/" + tp.count }))));
      });
      return [searchForm(""), h("ul", { class: "list" }, items)];
    });
  }

  function searchScreen(q) {
    return get("search?q=" + encodeURIComponent(q)).then(function (d) {
      return [searchForm(q), h("p", { class: "muted", id: "found", text: d.questions.length ? t("bank.found", { n: d.questions.length }) : t("bank.nothing") }), questionList(d.questions)];
    });
  }

  function topicScreen(id) {
    return get("topics/" + encodeURIComponent(id)).then(function (d) { return [h("h1", { text: d.title }), questionList(d.questions)]; });
  }

  function openQuestion(id) { show(go(current ? current.tab : "bank", function () { return questionScreen(id); }), "push"); }

  function termChips(terms) {
    return h("div", { class: "chips" }, terms.map(function (term) {
      return h("button", { type: "button", onclick: function () { openTerm(term.id); }, text: term.name });
    }));
  }

  function questionScreen(id) {
    return get("questions/" + encodeURIComponent(id)).then(function (q) {
      var askBtn = h("button", { class: "btn", type: "button", id: "ask", text: t("bank.ask"), onclick: function () {
        askBtn.disabled = true;
        api("ask", { method: "POST", body: JSON.stringify({ question: q.id }) }).then(function (d) {
          askBtn.disabled = false;
          if (d.ok) { toast(t("bank.asked")); if (TG && TG.close && ME && !ME.group) setTimeout(function () { TG.close(); }, 800); }
          else toast(d.error === "start_bot" ? t("bank.ask_start") : d.error === "too_many" ? t("bank.ask_too_many") : t("bank.ask_failed"));
        }).catch(function () { askBtn.disabled = false; toast(t("bank.ask_failed")); });
      } });
      var out = [h("p", { class: "muted", text: q.topic + " · " + t("bank.difficulty") + " " + "★★★".slice(0, q.difficulty) }),
        q.context ? h("p", { class: "context", id: "question-context", text: q.context }) : null,
        h("h1", { id: "question-text", text: label(q) }), askBtn,
        h("section", { class: "card" }, h("h2", { text: t("bank.answer") }), h("div", { class: "rich", html: q.answer_html }),
          h("h3", { text: t("bank.key_points") }), h("ul", { class: "points" }, q.key_points.map(function (kp) {
            return h("li", null, kp.text, kp.core ? null : h("span", { class: "badge", text: t("bank.bonus") }));
          })))];
      if (q.details_html) {  // the bank's details usually open with their own bold label («Подробнее»)
        var labelled = q.details_html.slice(0, 3) === "<b>";
        out.push(h("section", { class: "card", id: "details", "aria-label": t("bank.details") },
          labelled ? null : h("h2", { text: t("bank.details") }), h("div", { class: "rich", html: q.details_html })));
      }
      if (q.follow_ups.length) out.push(h("section", { class: "card" }, h("h2", { text: t("bank.follow_ups") }), q.follow_ups.map(function (f) {
        return h("details", null, h("summary", { text: f.question }), h("div", { class: "rich", html: f.answer_html }));
      })));
      if (q.similar && q.similar.length) out.push(h("section", { class: "card", id: "similar" }, h("h2", { text: t("bank.similar") }), questionList(q.similar)));
      if (q.terms.length) out.push(h("section", null, h("h2", { text: t("bank.terms") }), termChips(q.terms)));
      return out;
    });
  }

  // Glossary --------------------------------------------------------------------------------------
  function openTerm(id) { show(go("glossary", function () { return termScreen(id); }), "push"); }

  function glossaryScreen(mode) {
    return get("glossary").then(function (g) {
      var byId = {}; g.terms.forEach(function (x) { byId[x.id] = x; });
      var toggle = h("div", { class: "filters", role: "group" },
        h("button", { type: "button", class: mode === "topics" ? "btn secondary" : "btn", "aria-pressed": String(mode !== "topics"), text: t("glossary.az"), onclick: function () { show(go("glossary", function () { return glossaryScreen("az"); }), "root"); } }),
        h("button", { type: "button", class: mode === "topics" ? "btn" : "btn secondary", "aria-pressed": String(mode === "topics"), text: t("glossary.by_topic"), onclick: function () { show(go("glossary", function () { return glossaryScreen("topics"); }), "root"); } }));
      function items(list) {
        return h("ul", { class: "list" }, list.map(function (x) {
          return h("li", null, h("button", { type: "button", onclick: function () { openTerm(x.id); } }, h("span", { text: x.name }), x.en !== x.name ? h("span", { class: "muted", text: " · " + x.en } ) : null));
        }));
      }
      if (mode === "topics") return [toggle].concat(g.topics.map(function (tp) { return h("section", null, h("h2", { text: tp.title }), items(tp.terms.map(function (id) { return byId[id]; }))); }));
      var groups = {}, order = [];  // by the name shown, in the interface language's alphabetical order
      g.terms.slice().sort(function (a, b) { return a.name.localeCompare(b.name, ME.lang); }).forEach(function (x) {
        var l = x.name.charAt(0).toUpperCase();
        if (!groups[l]) { groups[l] = []; order.push(l); }
        groups[l].push(x);
      });
      return [toggle].concat(order.map(function (l) { return h("section", null, h("h2", { text: l }), items(groups[l])); }));
    });
  }

  function termScreen(id) {
    return get("glossary/" + encodeURIComponent(id)).then(function (x) {
      return [h("h1", { text: x.name }), x.en !== x.name ? h("p", { class: "muted", text: x.en }) : null,
        x.aliases.length ? h("p", { class: "muted", text: t("glossary.aliases") + ": " + x.aliases.join(", ") }) : null,
        h("div", { class: "card rich", html: x.definition_html }),
        h("h2", { text: t("glossary.questions") }), questionList(x.questions)].filter(Boolean);
    });
  }

  // My answers ------------------------------------------------------------------------------------
  var filters = { topic: "", grade: "" };

  function answerItem(a, refs) {
    var meta = [day(a.at, { day: "numeric", month: "short", year: "numeric" }) + ", " + a.at.slice(11)];
    if (a.group) meta.push(t("answers.in_group", { title: a.group }));
    if (a.edited) meta.push(t("answers.edited"));
    var q = a.question;
    return h("li", { class: "card answer-item", "data-question": a.question_id },
      q ? h("button", { type: "button", class: "link", onclick: function () { openQuestion(q.id); }, text: label(q) }) : h("b", { text: a.question_id }),
      h("p", { class: "muted", text: meta.join(" · ") },
        a.score !== null ? h("span", { class: "badge " + a.verdict, text: t("answers.score", { score: a.score }) }) : null,
        h("span", { class: "badge", text: a.self_grade ? t("answers.self_" + a.self_grade) : t("answers.self_none") })),
      h("div", { class: "pair" },
        h("div", { class: "yours" }, h("h3", { text: t("answers.yours") }), h("p", { text: a.text })),
        h("div", { class: "reference rich", tabindex: "0", "aria-label": t("answers.reference") }, h("h3", { text: t("answers.reference") }), h("div", { html: refs[a.question_id] || "" }))),
      a.covered.length ? h("div", null, h("h3", { class: "good", text: "✓ " + t("answers.covered") }), h("ul", { class: "points" }, a.covered.map(function (x) { return h("li", { text: x }); }))) : null,
      a.missed.length ? h("div", null, h("h3", { class: "weak", text: "✗ " + t("answers.missed") }), h("ul", { class: "points" }, a.missed.map(function (x) { return h("li", { text: x }); }))) : null);
  }

  function answersScreen() {
    var query = "answers?topic=" + encodeURIComponent(filters.topic) + "&grade=" + encodeURIComponent(filters.grade);
    return Promise.all([get(query), get("topics")]).then(function (r) {
      var d = r[0], topicsList = r[1].topics;
      function select(name, options) {
        return h("select", { name: name, "aria-label": name === "topic" ? t("answers.all_topics") : t("answers.all_grades"), onchange: function (e) {
          filters[name] = e.target.value; show(go("answers", answersScreen), "root");
        } }, options.map(function (o) { return h("option", { value: o[0], selected: filters[name] === o[0] ? "selected" : null, text: o[1] }); }));
      }
      var list = h("ul", { class: "list", id: "answers" });
      function add(page) {
        page.items.forEach(function (a) { list.appendChild(answerItem(a, page.references)); });
        if (page.next) list.appendChild(h("li", null, h("button", { type: "button", class: "btn secondary", text: t("answers.more"), onclick: function (e) {
          e.target.closest("li").remove();
          get(query + "&before=" + page.next).then(add);
        } })));
      }
      add(d);
      return [h("div", { class: "filters" },
        select("topic", [["", t("answers.all_topics")]].concat(topicsList.map(function (x) { return [x.id, x.title]; }))),
        select("grade", [["", t("answers.all_grades")], ["good", t("answers.grade_good")], ["partial", t("answers.grade_partial")], ["weak", t("answers.grade_weak")],
          ["3", t("answers.self_3")], ["2", t("answers.self_2")], ["1", t("answers.self_1")]])),
        d.items.length ? list : h("p", { class: "muted", text: t("answers.none") })];
    });
  }

  // The group board -------------------------------------------------------------------------------
  function boardScreen() {
    return get("board").then(function (b) {
      function rows(list) {
        if (!list.length) return h("p", { class: "muted", text: t("board.empty") });
        return h("ol", { class: "list board" }, list.map(function (r, i) {
          return h("li", { class: r.me ? "me" : null }, h("span", { text: (i + 1) + ". " + r.name + (r.me ? " (" + t("board.me") + ")" : "") }),
            h("span", { class: "muted", text: t("board.points", r) + " · " + t("board.detail", r) }));
        }));
      }
      return [h("h1", { text: b.title }),
        h("section", { class: "card" }, h("h2", { text: t("board.week") + (b.since ? " · " + t("board.since", { date: day(b.since, { day: "numeric", month: "long" }) }) : "") }), rows(b.week)),
        h("section", { class: "card" }, h("h2", { text: t("board.all") }), rows(b.all)),
        h("p", { class: "muted", text: t("board.hint") })];
    });
  }

  // Start -----------------------------------------------------------------------------------------
  var SCREENS = { progress: progressScreen, bank: bankScreen, glossary: function () { return glossaryScreen("az"); }, answers: answersScreen, board: boardScreen };

  function start() {
    document.documentElement.lang = ME.lang;
    document.title = t("title");
    var names = ["progress", "bank", "glossary", "answers"].concat(ME.group ? ["board"] : []);
    tabs.replaceChildren.apply(tabs, names.map(function (name) {
      return h("button", { class: "tab", type: "button", role: "tab", "data-tab": name, id: "tab-" + name, text: t("tab." + name),
        onclick: function () { show(go(name, SCREENS[name]), "root"); } });
    }));
    var wanted = new URLSearchParams(location.search).get("s");
    var first = ME.group ? "board" : (SCREENS[wanted] ? wanted : "progress");
    show(go(first, SCREENS[first]), "root");
  }

  function boot() {
    var lp = launchParams();
    if (lp.theme) { try { applyTheme(JSON.parse(lp.theme)); } catch (e) { /* no theme: the defaults */ } }
    var ready;
    if (lp.data) {
      INIT = lp.data;
      if (lp.platform) loadTelegramScript();  // a Telegram client: its script for ready(), expand(), BackButton
      ready = Promise.resolve();
    } else {  // outside Telegram: the dev mode signs a test user (WEBAPP_DEV=1 only; 404 otherwise)
      ready = fetch("api/dev-init").then(function (r) { return r.ok ? r.json() : {}; }).then(function (d) { INIT = d.init_data || ""; });
    }
    ready.then(function () { return api("me"); }).then(function (me) {
      if (me._status !== 200) {
        main.replaceChildren(h("p", { class: "weak", id: "unauthorized", text: "Откройте приложение из Telegram. · Open the app from Telegram." }));
        return;
      }
      ME = me; S = me.strings; start();
    }).catch(function () { main.replaceChildren(h("p", { class: "weak", text: "Network error" })); });
  }

  boot();
})();
