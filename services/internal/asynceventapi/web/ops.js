// The ops view for admins: /ui/ops.html?event=<eventId>. Refreshes every
// few seconds (slower while the server cannot be reached): the event's
// counts by status and result, capacity remaining and the invariant
// (GET /admin/events/{id}/stats), and the queue and DLQ depths
// (GET /admin/dlq).
import { $, api, el, NetworkError, onSignIn, problemText, say, sleep, start } from "./pacer.js";

const eventId = new URLSearchParams(location.search).get("event") || "";
let run = 0;

function rows(tbody, counts) {
  tbody.replaceChildren(...Object.entries(counts || {}).sort().map(([k, n]) => el("tr", {}, el("td", {}, k), el("td", {}, String(n)))));
}

async function refresh() {
  const q = await api("/admin/dlq?max=0");
  if (q.status === 403 || q.status === 401) {
    say("The ops view needs the admin role.", "error");
    return false;
  }
  if (q.status === 200) {
    $("main-depth").textContent = String(q.body.mainDepth);
    $("dead-depth").textContent = String(q.body.deadDepth);
  }
  if (eventId) {
    const [ev, st] = await Promise.all([api(`/admin/events/${encodeURIComponent(eventId)}`), api(`/admin/events/${encodeURIComponent(eventId)}/stats`)]);
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
