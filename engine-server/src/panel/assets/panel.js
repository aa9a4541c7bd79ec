// The panel's one script: what a page cannot do without it. Every page works without
// it but the chat, whose reply streams.
"use strict";

const csrf = () => document.querySelector('meta[name="csrf"]')?.content ?? "";

// A page whose state changes on its own (the extensions directory) names the admin API
// route that tells: when its answer changes, the page's main part is fetched again.
function live(main) {
  const url = main.dataset.live;
  let last = null;
  const poll = async () => {
    try {
      const answer = await fetch(url, { credentials: "same-origin", headers: { accept: "application/json" } });
      const text = await answer.text();
      if (last !== null && text !== last) {
        const page = await fetch(location.href, { credentials: "same-origin", headers: { accept: "text/html", "x-panel-refresh": "1" } });
        const fresh = new DOMParser().parseFromString(await page.text(), "text/html").querySelector("main");
        if (fresh) main.innerHTML = fresh.innerHTML;
      }
      last = text;
      // Said on the page: a test waits for the first answer before it changes the
      // directory.
      main.dataset.polled = "yes";
    } catch (_) { /* the engine restarting: try again at the next tick */ }
    setTimeout(poll, 1500);
  };
  poll();
}

// The chat: the turn route's NDJSON read as it streams. A tool call is a dim line,
// collapsed to its name until opened to its arguments; its status and duration are
// appended when it ends.
function chat(form) {
  const log = document.getElementById("chat-log");
  const conversation = form.querySelector('[name="conversation"]');
  const add = (tag, cls, text) => {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    log.appendChild(node);
    return node;
  };
  const calls = new Map();
  let reply = null;
  const on = (event) => {
    switch (event.type) {
      case "chat":
        reply ??= add("div", "reply", "");
        reply.textContent += event.text;
        break;
      case "tool_call": {
        reply = null;
        const line = add("details", "activity");
        line.dataset.call = event.id;
        const summary = document.createElement("summary");
        const name = document.createElement("span");
        name.className = "name";
        name.textContent = event.tool_id ?? event.tool;
        const status = document.createElement("span");
        status.className = "status";
        summary.append(name, " ", status);
        const args = document.createElement("pre");
        args.className = "arguments";
        args.textContent = JSON.stringify(event.arguments, null, 2);
        line.append(summary, args);
        calls.set(event.id, status);
        break;
      }
      case "tool_result": {
        const status = calls.get(event.id);
        if (status) {
          status.textContent = `${event.status} · ${event.duration_ms} ms`;
          status.className = `status ${event.status}`;
        }
        break;
      }
      case "action_performed": case "action_failed": case "action_dropped":
        add("div", "activity action", `${event.action}: ${event.type.replace("action_", "")}${event.error ? " (" + event.error + ")" : ""}${event.reason ? " (" + event.reason + ")" : ""}`);
        break;
      case "error":
        add("div", "error", event.message);
        break;
      case "done":
        add("div", "dim done", `${event.stop?.reason ?? event.stop} · ${event.model_requests} requests · $${(event.cost_usd ?? 0).toFixed(4)}`);
        break;
    }
  };
  form.addEventListener("submit", async (submitted) => {
    submitted.preventDefault();
    const message = form.querySelector('[name="message"]');
    const text = message.value.trim();
    if (!text) return;
    message.value = "";
    add("div", "user", text);
    reply = null;
    const body = { message: text, subscriber: form.querySelector('[name="subscriber"]').value || "panel" };
    if (conversation.value) body.conversation = conversation.value;
    const answer = await fetch(form.action, {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", "x-csrf-token": csrf() },
      body: JSON.stringify(body),
    });
    if (!answer.ok) {
      const problem = await answer.json().catch(() => ({}));
      add("div", "error", problem.error ?? `${answer.status}`);
      return;
    }
    conversation.value = answer.headers.get("x-conversation-id") ?? conversation.value;
    const reader = answer.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffered = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += value;
      let end;
      while ((end = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 1);
        if (line.trim()) on(JSON.parse(line));
      }
    }
  });
}

document.querySelectorAll("main[data-live]").forEach(live);
document.querySelectorAll("form.chat-form").forEach(chat);
