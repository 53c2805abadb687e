// The ops view for admins: /ui/ops.html?event=<eventId>. Refreshes every
// few seconds (slower while the server cannot be reached): the event's
// counts by status and result, its DLQ candidates, capacity remaining and
// the invariant (GET /admin/events/{id}/stats), and the queue and DLQ depths, the
// capacity invariant of all open events and the worker outcomes from the
// API's GET /metrics (docs/metrics.md) where it serves them, else the
// depths from GET /admin/dlq.
import { $, api, el, NetworkError, onSignIn, problemText, say, sleep, start } from "./pacer.js";

const eventId = new URLSearchParams(location.search).get("event") || "";
let run = 0;

function rows(tbody, counts) {
  tbody.replaceChildren(...Object.entries(counts || {}).sort().map(([k, n]) => el("tr", {}, el("td", {}, k), el("td", {}, String(n)))));
}

// parseMetrics reads the Prometheus text format into {name, labels, value}.
export function parseMetrics(text) {
  const out = [];
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels = {};
    for (const [, k, v] of (m[2] || "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[k] = v;
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

// readMetrics is the API's /metrics, or null when it serves none or no
// queue gauge.
async function readMetrics() {
  let res;
  try {
    res = await fetch("/metrics");
  } catch {
    return null;
  }
  if (!res.ok) return null;
  const ms = parseMetrics(await res.text());
  return ms.some((m) => m.name === "pacer_queue_messages") ? ms : null;
}

function showMetrics(ms) {
  const q = (queue, state) => ms.find((m) => m.name === "pacer_queue_messages" && m.labels.queue === queue && m.labels.state === state)?.value ?? 0;
  $("main-depth").textContent = String(q("main", "visible"));
  $("main-inflight").textContent = String(q("main", "in_flight") + q("main", "delayed"));
  $("dead-depth").textContent = String(q("dlq", "visible") + q("dlq", "in_flight") + q("dlq", "delayed"));
  $("queues").dataset.source = "metrics";
  $("queue-source").textContent = "(from /metrics)";
  const inv = ms.find((m) => m.name === "pacer_event_capacity_invariant_ok");
  const all = $("invariant-all");
  all.textContent = inv ? (inv.value === 1 ? "OK" : "BROKEN") : "not reported";
  all.className = inv ? (inv.value === 1 ? "ok" : "bad") : "";
  const outcomes = {};
  for (const m of ms) if (m.name === "pacer_worker_messages_total") outcomes[m.labels.outcome] = m.value;
  rows($("worker-outcomes"), outcomes);
  $("worker-note").hidden = Object.keys(outcomes).length > 0;
}

async function refresh() {
  const ms = await readMetrics();
  $("workers").hidden = !ms;
  if (ms) {
    showMetrics(ms);
  } else {
    const q = await api("/admin/dlq?max=0");
    if (q.status === 403 || q.status === 401) {
      say("The ops view needs the admin role.", "error");
      return false;
    }
    if (q.status === 200) {
      $("main-depth").textContent = String(q.body.mainDepth);
      $("main-inflight").textContent = "–";
      $("dead-depth").textContent = String(q.body.deadDepth);
      $("queues").dataset.source = "admin";
      $("queue-source").textContent = "(from the admin stats)";
    }
  }
  if (eventId) {
    const [ev, st] = await Promise.all([api(`/admin/events/${encodeURIComponent(eventId)}`), api(`/admin/events/${encodeURIComponent(eventId)}/stats`)]);
    if (st.status === 403 || st.status === 401) {
      say("The ops view needs the admin role.", "error");
      return false;
    }
    if (st.status !== 200 || ev.status !== 200) {
      say(st.status === 404 ? `There is no event "${eventId}".` : problemText(st.body), "error");
      $("stats").hidden = true;
      return true;
    }
    $("stats").hidden = false;
    $("title").textContent = ev.body.title || ev.body.eventId;
    $("event-meta").textContent = `${ev.body.eventType} · ${ev.body.status}`;
    $("total").textContent = String(st.body.total);
    $("remaining").textContent = st.body.capacityRemaining ?? "n/a";
    $("capacity").textContent = st.body.capacityTotal ?? "n/a";
    const inv = $("invariant");
    inv.textContent = st.body.eventType === "FIRST_COME" ? (st.body.invariantOk ? "OK" : "BROKEN") : "n/a";
    inv.className = st.body.invariantOk ? "ok" : "bad";
    const dlq = $("dlq-candidates");
    dlq.textContent = String(st.body.dlqCandidates ?? 0);
    dlq.className = st.body.dlqCandidates > 0 ? "bad" : "ok";
    rows($("by-status"), st.body.byStatus);
    rows($("by-result"), st.body.byResultCode);
  }
  say("");
  $("refreshed").textContent = "Refreshed " + new Date().toLocaleTimeString();
  return true;
}

async function loop() {
  const mine = ++run;
  let delay = 3000;
  while (mine === run) {
    try {
      if (!(await refresh())) return;
      delay = 3000;
    } catch (e) {
      if (!(e instanceof NetworkError)) throw e;
      delay = Math.min(delay * 2, 30000);
      say(`The server cannot be reached; trying again in ${delay / 1000} s.`, "error");
    }
    await sleep(delay);
  }
}

async function main() {
  await start({ preset: 2 });
  $("event-input").value = eventId;
  onSignIn(loop);
}

main();
