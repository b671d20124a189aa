// The demo's web chat: a Telegram client for the local stand-in, over /demo/api/ (see the README).
(function () {
  "use strict";
  var WORDS = {
    ru: { private: "Личный чат", group: "Группа", bot: "бот", members: "участники: {a}, {b} и бот", as: "Пишет:",
          placeholder: "Сообщение", reply: "Ответить", replying: "Ответ на: ", edited: "изменено", vote: "Голосовать",
          quiz: "Викторина", poll: "Опрос", votes: "голосов: ", empty: "Напишите /start — бот ответит здесь.",
          voice: "голосовое", failed: "Не отправилось: " },
    en: { private: "Private chat", group: "Group", bot: "bot", members: "members: {a}, {b} and the bot", as: "As:",
          placeholder: "Message", reply: "Reply", replying: "Replying to: ", edited: "edited", vote: "Vote",
          quiz: "Quiz", poll: "Poll", votes: "votes: ", empty: "Send /start: the bot answers here.",
          voice: "voice", failed: "Not sent: " }
  };
  var W = WORDS.ru, info = null;
  var state = { chat: "private", user: 1, cursor: 0, replyTo: null, controller: null };
  var byId = {};  // message id -> {data, node}
  var $ = function (id) { return document.getElementById(id); };
  var log = $("log"), input = $("input");

  function api(path, body) {
    var options = body === undefined ? {} : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
    return fetch("/demo/api/" + path, options).then(function (r) {
      return r.json().then(function (data) { if (!r.ok) throw new Error(data.error || r.status); return data; });
    });
  }

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") node.textContent = attrs[k];
      else if (k === "class") node.className = attrs[k];
      else if (k.slice(0, 2) === "on") node.addEventListener(k.slice(2), attrs[k]);
      else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { if (c) node.appendChild(c); });
    return node;
  }

  function toast(text, seconds) {
    var t = $("toast");
    t.textContent = text; t.hidden = false;
    clearTimeout(toast.timer);
    toast.timer = setTimeout(function () { t.hidden = true; }, (seconds || 3) * 1000);
  }

  // Formatted text: Telegram's entities (offsets in UTF-16 code units, as JavaScript strings count)
  function plain(parent, text, links) {
    if (!links) { parent.appendChild(document.createTextNode(text)); return; }
    var re = /(^|[\s(«"])(\/[a-zA-Z][a-zA-Z0-9_]{0,31})(?=$|[\s.,;:!?)»"])|(https?:\/\/[^\s<>«»"]+[^\s<>«»".,;:!?)])/g, pos = 0, m;
    while ((m = re.exec(text))) {
      var start = m.index + (m[1] || "").length, token = m[2] || m[3];
      parent.appendChild(document.createTextNode(text.slice(pos, start)));
      if (m[2]) parent.appendChild(el("a", { class: "cmd", href: "#", text: token, onclick: function (cmd) {
        return function (e) { e.preventDefault(); send(cmd); };
      }(token) }));
      else parent.appendChild(el("a", { href: token, target: "_blank", rel: "noopener", text: token }));
      pos = start + token.length;
    }
    parent.appendChild(document.createTextNode(text.slice(pos)));
  }

  var TAGS = { bold: "b", italic: "i", underline: "u", strikethrough: "s", code: "code", pre: "pre", blockquote: "blockquote",
               expandable_blockquote: "blockquote", spoiler: "span", text_link: "a" };
  function entityNode(e) {
    var node = document.createElement(TAGS[e.type] || "span");
    if (e.type === "spoiler") { node.className = "spoiler"; node.onclick = function () { node.classList.add("shown"); }; }
    if (e.type === "expandable_blockquote") {
      node.className = "expandable closed";
      node.onclick = function () { node.classList.remove("closed"); };
    }
    if (e.type === "text_link") { node.href = /^https?:\/\//.test(e.url) ? e.url : "#"; node.onclick = function (ev) { ev.preventDefault(); openLink(e.url); }; }
    return node;
  }
  function build(parent, text, entities, start, end, links) {
    var pos = start, i = 0;
    while (i < entities.length) {
      var e = entities[i], stop = e.offset + e.length, inner = [], j = i + 1;
      while (j < entities.length && entities[j].offset < stop) inner.push(entities[j++]);
      if (e.offset > pos) plain(parent, text.slice(pos, e.offset), links);
      var node = entityNode(e);
      build(node, text, inner, e.offset, stop, links && !/code|pre|text_link/.test(e.type));
      parent.appendChild(node);
      pos = Math.max(pos, stop); i = j;
    }
    if (pos < end) plain(parent, text.slice(pos, end), links);
  }
  function formatted(text, entities) {
    var box = document.createDocumentFragment();
    var sorted = (entities || []).slice().sort(function (a, b) { return a.offset - b.offset || b.length - a.length; });
    build(box, text || "", sorted, 0, (text || "").length, true);
    return box;
  }

  // Links, buttons, the Mini App ------------------------------------------------------------------
  function openLink(url) {
    var m = /^https:\/\/t\.me\/([A-Za-z0-9_]+)(\/[A-Za-z0-9_]+)?\/?\?(.*)$/.exec(url);
    if (m && info && m[1] === info.bot.username) {
      var params = new URLSearchParams(m[3]);
      if (params.get("startapp") !== null) return openApp(url);
      if (params.get("start") !== null) { setChat("private"); return send("/start " + params.get("start")); }
    }
    if (/^https?:\/\//.test(url)) window.open(url, "_blank", "noopener");
  }

  function openApp(url) {
    return api("webapp", { user: state.user, chat: state.chat, url: url }).then(function (r) {
      $("frame").src = r.url;
      $("panel-title").textContent = (info.menu && info.menu.text) || "Mini App";
      $("panel").hidden = false;
    }).catch(function (err) { toast(String(err.message || err)); });
  }

  function press(message, button, node) {
    if (button.web_app) return openApp(button.web_app);
    if (button.url) return openLink(button.url);
    if (button.data === undefined) return;
    node.disabled = true;
    api("press", { chat: state.chat, user: state.user, message_id: message.id, data: button.data })
      .then(function (r) { if (r.notice) toast(r.notice, r.alert ? 6 : 3); })
      .catch(function (err) { toast(String(err.message || err)); })
      .then(function () { node.disabled = false; });
  }

  function vote(message, option) {
    api("vote", { chat: state.chat, user: state.user, poll_id: message.poll.id, option: option })
      .catch(function (err) { toast(String(err.message || err)); });
  }

  // Messages --------------------------------------------------------------------------------------
  function pollNode(message) {
    var p = message.poll, mine = p.votes[String(state.user)], total = p.counts.reduce(function (a, b) { return a + b; }, 0);
    var box = el("div", { class: "poll" }, [
      el("div", { class: "kind", text: p.type === "quiz" ? W.quiz : W.poll }),
      el("div", { class: "q", text: p.question })
    ]);
    p.options.forEach(function (text, i) {
      if (mine === undefined) {
        box.appendChild(el("button", { type: "button", class: "opt", text: text, onclick: function () { vote(message, i); } }));
        return;
      }
      var share = total ? Math.round(100 * p.counts[i] / total) : 0;
      var mark = p.type === "quiz" && p.correct !== undefined ? (i === p.correct ? " ✅" : i === mine ? " ❌" : "") : (i === mine ? " ✔" : "");
      var cls = "res" + (p.correct === i ? " right" : i === mine ? " wrong" : "");
      box.appendChild(el("div", { class: cls }, [
        el("div", { text: share + "% " + text + mark }),
        el("div", { class: "bar", style: "width:" + Math.max(share, 2) + "%" })
      ]));
    });
    if (mine !== undefined) {
      box.appendChild(el("div", { class: "meta", text: W.votes + total }));
      if (p.explanation) box.appendChild(el("div", { class: "expl", text: "💡 " + p.explanation }));
    }
    return box;
  }

  function messageNode(m) {
    var bubble = el("div", { class: "bubble" });
    if (m.from === "user" && state.chat === "group") bubble.appendChild(el("div", { class: "name", text: m.name }));
    if (m.reply_to && byId[m.reply_to]) {
      var original = byId[m.reply_to].data;
      bubble.appendChild(el("div", { class: "quote", text: (original.from === "bot" ? "Interview" : original.name) + ": " + (original.text || "").split("\n")[0] }));
    }
    if (m.photo) bubble.appendChild(el("img", { class: "photo", src: m.photo.url, alt: m.photo.name }));
    if (m.document) {
      bubble.appendChild(m.document.url ? el("a", { class: "doc", href: m.document.url, download: m.document.name, text: m.document.name })
                                        : el("span", { class: "doc", text: m.document.name }));
    }
    if (m.poll) bubble.appendChild(pollNode(m));
    else if (m.text) bubble.appendChild(formatted(m.text, m.entities));
    var meta = el("div", { class: "meta" });
    if (m.edited) meta.appendChild(document.createTextNode(W.edited));
    if (state.chat === "group" && m.from === "bot" && !m.poll) {
      meta.appendChild(el("button", { type: "button", text: W.reply, onclick: function () { setReply(m); } }));
    }
    if (meta.childNodes.length) bubble.appendChild(meta);
    var node = el("div", { class: "msg " + m.from, "data-id": m.id }, [bubble]);
    if (m.buttons) {
      var kb = el("div", { class: "inline-kb" });
      m.buttons.forEach(function (row) {
        var r = el("div", { class: "row" });
        row.forEach(function (b) {
          var label = b.text + (b.url && !b.web_app ? " ↗" : "");
          var btn = el("button", { type: "button", text: label });
          btn.onclick = function () { press(m, b, btn); };
          r.appendChild(btn);
        });
        kb.appendChild(r);
      });
      node.appendChild(kb);
    }
    return node;
  }

  function apply(messages) {
    var atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 80;
    messages.forEach(function (m) {
      var node = messageNode(m), known = byId[m.id];
      if (known) log.replaceChild(node, known.node);
      else {
        var empty = log.querySelector(".empty");
        if (empty) empty.remove();
        log.appendChild(node);
      }
      byId[m.id] = { data: m, node: node };
      if (m.keyboard) keyboard(m.keyboard);
    });
    if (atBottom || messages.some(function (m) { return !m.edited; })) log.scrollTop = log.scrollHeight;
  }

  function keyboard(rows) {
    var kb = $("keyboard");
    kb.replaceChildren();
    rows.forEach(function (row) {
      var r = el("div", { class: "row" });
      row.forEach(function (text) { r.appendChild(el("button", { type: "button", text: text, onclick: function () { send(text); } })); });
      kb.appendChild(r);
    });
    kb.hidden = !rows.length;
  }

  function poll() {
    var controller = new AbortController(), chat = state.chat;
    state.controller = controller;
    var url = "/demo/api/messages?chat=" + chat + "&user=" + (chat === "private" ? 1 : state.user) + "&after=" + state.cursor + "&wait=25";
    fetch(url, { signal: controller.signal }).then(function (r) { return r.json(); }).then(function (data) {
      if (state.controller !== controller) return;
      apply(data.messages || []);
      state.cursor = data.next;
      poll();
    }).catch(function () {
      if (state.controller === controller) setTimeout(poll, 1000);
    });
  }

  // Sending ---------------------------------------------------------------------------------------
  function send(text) {
    text = text.trim();
    if (!text) return Promise.resolve();
    var body = { text: text, chat: state.chat, user: state.chat === "private" ? 1 : state.user };
    if (state.replyTo) body.reply_to = state.replyTo.id;
    setReply(null);
    return api("send", body).catch(function (err) { toast(W.failed + (err.message || err)); });
  }

  function setReply(message) {
    state.replyTo = message;
    $("replying").hidden = !message;
    if (message) { $("replying").firstChild.textContent = W.replying + (message.text || "").split("\n")[0]; input.focus(); }
  }

  function setChat(chat) {
    if (chat === state.chat && state.controller) return;
    if (state.controller) state.controller.abort();
    state.chat = chat; state.cursor = 0; byId = {};
    state.user = chat === "private" ? 1 : Number($("as").value || 1);
    setReply(null);
    $("to-private").setAttribute("aria-pressed", String(chat === "private"));
    $("to-group").setAttribute("aria-pressed", String(chat === "group"));
    $("as-label").hidden = chat !== "group";
    $("menu").hidden = chat !== "private" || !info.menu;  // the menu button is the private chat's
    var users = info.users;
    $("title").textContent = chat === "private" ? "Interview" : info.group.title;
    $("subtitle").textContent = chat === "private" ? W.bot + " · @" + info.bot.username
      : W.members.replace("{a}", users[0].name).replace("{b}", users[1].name);
    log.replaceChildren(el("p", { class: "empty", text: W.empty }));
    keyboard([]);
    poll();
  }

  $("composer").addEventListener("submit", function (e) { e.preventDefault(); var t = input.value; input.value = ""; send(t); });
  input.addEventListener("keydown", function (e) {
    if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); $("composer").requestSubmit(); }
  });
  $("to-private").onclick = function () { setChat("private"); };
  $("to-group").onclick = function () { setChat("group"); };
  $("as").onchange = function () { state.user = Number($("as").value); };
  $("reply-cancel").onclick = function () { setReply(null); };
  $("panel-close").onclick = function () { $("panel").hidden = true; $("frame").src = "about:blank"; };
  $("menu").onclick = function () { if (info.menu) openApp(info.menu.url); };
  $("voice").onchange = function () {
    var file = $("voice").files[0];
    if (!file) return;
    var form = new FormData();
    form.append("chat", state.chat); form.append("user", String(state.chat === "private" ? 1 : state.user));
    if (state.replyTo) form.append("reply_to", String(state.replyTo.id));
    form.append("file", file);
    setReply(null);
    fetch("/demo/api/voice", { method: "POST", body: form }).then(function (r) { return r.json(); })
      .then(function (r) { if (!r.ok) toast(W.failed + r.error); });
    $("voice").value = "";
  };

  api("info").then(function (data) {
    info = data;
    W = WORDS[data.language] || WORDS.en;
    document.documentElement.lang = data.language;
    $("to-private").textContent = W.private;
    $("to-group").textContent = data.group.title;
    $("as-text").textContent = W.as;
    data.users.forEach(function (u) { $("as").appendChild(el("option", { value: u.n, text: u.name })); });
    input.placeholder = W.placeholder;
    if (data.menu) $("menu").textContent = "☰ " + data.menu.text;
    $("voice-label").hidden = !data.voice;
    $("voice-label").title = W.voice;
    setChat("private");
    input.focus();
  });
})();
