// The participation page: /ui/?event=<eventId>.
//
// Participate answers at once with a requestId (a second click answers the
// same one: the API is idempotent per user and event); the page keeps it
// in localStorage per user and event, so a reload resumes the same
// request. It then polls GET /requests/{id} with backoff until the request
// is DONE (a terminal status; a lottery entry stays PROCESSING while the
// lottery is COLLECTING and is DONE once ANNOUNCED).
import { $, api, el, fmtTime, NetworkError, onSignIn, problemName, problemText, say, settings, sleep, start, user } from "./pacer.js";
import { humanToken, setupHumanCheck, spendHumanToken } from "./human.js";

const eventId = new URLSearchParams(location.search).get("event") || "";
const terminal = new Set(["SUCCEEDED", "REJECTED", "FAILED_FINAL"]);
let pollRun = 0; // bumps to stop an older poll loop
let mineCursor = "";
let humanCheckRequired = false; // the event's humanCheck.required

const storeKey = () => `pacer.request.${user()}.${eventId}`;

function showEvent(ev) {
  $("event").hidden = false;
  $("title").textContent = ev.title || ev.eventId;
  const meta = [`${ev.eventType} · ${ev.status}`];
  if (ev.eventType === "FIRST_COME") meta.push(`${ev.capacityTotal} seats`);
  if (ev.closesAt) meta.push(`closes ${fmtTime(ev.closesAt)}`);
  if (ev.eventType === "LOTTERY") meta.push(`${ev.winners} winners, entries until ${fmtTime(ev.lotteryCutoffAt)}`);
  $("event-meta").textContent = meta.join(" · ");
  if (ev.status !== "OPEN") say(ev.eventType === "LOTTERY" && ev.status === "ANNOUNCED"
    ? "The lottery has been drawn: entries are closed." : "This event is closed: it takes no new participations.", "warn");
  humanCheckRequired = !!(ev.humanCheck && ev.humanCheck.required);
  if (ev.status === "OPEN") setupHumanCheck(ev).then((problem) => { if (problem) say(problem, "error"); });
}


async function loadEvent() {
  const r = await api(`/events/${encodeURIComponent(eventId)}`, { onRetry: retrying });
  if (r.status === 200) {
    showEvent(r.body);
    return true;
  }
  if (r.status === 404) say(`There is no event "${eventId}".`, "error");
  else if (r.status === 422) say(`"${eventId}" is not a valid event id.`, "error");
  else say(problemText(r.body), "error");
  $("event").hidden = true;
  return false;
}

function retrying(attempt, delay) {
  say(`Cannot reach the server; retry ${attempt} in ${Math.round(delay / 100) / 10} s…`, "warn");
}

function stepOf(v) {
  if (terminal.has(v.status)) return "DONE";
  return v.status;
}

const resultText = {
  SUCCESS: "SUCCESS: you have a place.",
  REJECTED_CAPACITY: "REJECTED_CAPACITY: sold out, every place was taken.",
  LOTTERY_WIN: "LOTTERY ANNOUNCED: you won!",
  REJECTED_LOTTERY_LOSE: "LOTTERY ANNOUNCED: you were not drawn.",
  REJECTED_LOTTERY_CLOSED: "Your entry arrived after the lottery closed.",
};

function showRequest(v) {
  $("request").hidden = false;
  $("request-id").textContent = v.requestId;
  const order = ["RECEIVED", "QUEUED", "PROCESSING", "DONE"];
  const at = order.indexOf(stepOf(v));
  for (const li of $("stepper").children) {
    const i = order.indexOf(li.dataset.step);
    li.dataset.state = i < at || (i === at && li.dataset.step === "DONE") ? "done" : i === at ? "current" : "todo";
  }
  const phase = $("phase");
  phase.textContent = v.eventType === "LOTTERY" && v.uiPhase
    ? `LOTTERY ${v.uiPhase}` + (v.uiPhase === "COLLECTING" ? ` (entries until ${fmtTime(v.lotteryCutoffAt)}; the draw decides after that)` : "")
    : "";
  phase.dataset.phase = v.uiPhase || "";
  showPlace(terminal.has(v.status) ? null : v.place);
  const res = $("result");
  res.dataset.ui = v.uiResult || "";
  res.dataset.code = v.resultCode || "";
  if (terminal.has(v.status)) {
    res.textContent = resultText[v.resultCode] || `${v.uiResult || v.status}: ${v.errorMessage || v.resultCode || ""}`;
    if (v.resultCode === "REJECTED_CAPACITY") say("Sold out: this event has no places left.", "warn");
  } else {
    res.textContent = "Waiting for the result…";
  }
  const d = [];
  if (v.queueDelayMs) d.push(`queue delay ${v.queueDelayMs} ms`);
  if (v.e2eDelayMs) d.push(`end-to-end ${v.e2eDelayMs} ms`);
  $("delays").textContent = d.join(" · ");
}

// placeText is where a waiting request stands (the poll's place), as
// words; now is the page's clock, for the countdowns.
function placeText(p, now) {
  const secs = (ms) => Math.max(1, Math.ceil(ms / 1000));
  switch (p.kind) {
    case "arrival": {
      const parts = [];
      if (p.measuring) {
        parts.push("Measuring your place in line…");
      } else {
        parts.push(`About ${p.ahead.toLocaleString()} ahead of you` + (p.aheadError ? ` (±${p.aheadError.toLocaleString()})` : ""));
        const left = `${p.seatsLeft.toLocaleString()} places left`;
        // withinSeats: it may be within; sure when even ahead + aheadError are.
        parts.push(!p.withinSeats ? left : p.ahead + (p.aheadError || 0) < p.seatsLeft ? `within the ${left}` : `possibly within the ${left}`);
      }
      if (p.orderedAt > now) parts.push(`ordering the line: ${secs(p.orderedAt - now)} s left`);
      else if (p.expectedAt > now) parts.push(`decision expected in about ${secs(p.expectedAt - now)} s`);
      return parts.join(" · ");
    }
    case "delivery":
      return `${p.seatsLeft.toLocaleString()} places left (served in the order the queue delivers)`;
    case "lottery":
      return `${p.entries.toLocaleString()} entries so far for ${p.winners.toLocaleString()} winners: odds ${Math.round(p.odds * 1000) / 10} %`;
  }
  return "";
}

let placeTimer = 0;

// showPlace shows p (none: hidden), and keeps its countdowns running
// between polls.
function showPlace(p) {
  clearInterval(placeTimer);
  const node = $("place");
  node.hidden = !p;
  if (!p) return;
  node.dataset.kind = p.kind;
  node.dataset.ahead = p.ahead ?? "";
  node.dataset.asOf = p.asOf || "";
  const draw = () => { node.textContent = placeText(p, Date.now()); };
  draw();
  placeTimer = setInterval(draw, 1000);
}

async function poll(requestId) {
  const run = ++pollRun;
  let delay = 300;
  for (;;) {
    let r;
    try {
      r = await api(`/requests/${encodeURIComponent(requestId)}`, { onRetry: retrying });
    } catch (e) {
      if (!(e instanceof NetworkError)) throw e;
      if (run !== pollRun) return;
      say("The server cannot be reached; the request is safe. Polling stopped.", "error");
      $("poll-state").replaceChildren(el("button", { id: "poll-retry", type: "button", onclick: () => poll(requestId) }, "Retry"));
      return;
    }
    if (run !== pollRun) return;
    if (r.status === 404) {
      localStorage.removeItem(storeKey());
      $("request").hidden = true;
      say("That request is gone (the stack was reset?); participate again.", "warn");
      return;
    }
    if (r.status !== 200) {
      say(problemText(r.body), "error");
      return;
    }
    if ($("message").dataset.kind === "warn" && $("message").textContent.startsWith("Cannot reach")) say("");
    showRequest(r.body);
    if (terminal.has(r.body.status)) {
      $("poll-state").textContent = "";
      loadMine(true);
      return;
    }
    // The server knows when a read cannot show a change yet (an arrival
    // candidate waits for the allocator's watermark): Retry-After, seconds.
    const hint = 1000 * Number(r.headers.get("Retry-After") || 0);
    if (hint > delay) delay = hint;
    $("poll-state").textContent = `checking again in ${Math.round(delay / 100) / 10} s`;
    await sleep(delay);
    // A lottery entry may wait for its draw: slow down further then.
    delay = Math.min(delay * 1.6, r.body.uiPhase === "COLLECTING" ? 10000 : 4000);
  }
}

async function participate() {
  if (humanCheckRequired && !humanToken()) {
    say("Complete the human check above first.", "warn");
    return;
  }
  const b = $("participate");
  b.disabled = true;
  const body = humanCheckRequired ? { humanToken: humanToken() } : undefined;
  try {
    const r = await api(`/events/${encodeURIComponent(eventId)}/participations`, { method: "POST", body, onRetry: retrying, final: ["human-check-unavailable"] });
    if (humanCheckRequired) spendHumanToken();
    if (r.status === 202) {
      say(r.body.isDuplicate ? "You had already participated: this is your request."
        : r.body.humanCheck === "admitted-unverified" ? "The human check could not be made just now; your participation was accepted anyway." : "");
      localStorage.setItem(storeKey(), r.body.requestId);
      $("request").hidden = false;
      $("request-id").textContent = r.body.requestId;
      poll(r.body.requestId);
      return;
    }
    const why = {
      "event-closed": "This event is closed: it takes no new participations.",
      "lottery-closed": "The lottery is closed: entries ended at its cutoff.",
      "event-not-open": "This event is not open yet.",
      "event-not-found": `There is no event "${eventId}".`,
      "human-token-missing": "Complete the human check above first.",
      "human-check-failed": "The human check did not pass: complete it again, then participate.",
      "human-check-unavailable": "The human check cannot be made just now: try again in a moment.",
      "rate-limited": `Too many participations in this event from your network just now: try again in ${r.headers.get("Retry-After") || "a few"} s.`,
    }[problemName(r.body)];
    say(why || problemText(r.body), "error");
  } catch (e) {
    if (!(e instanceof NetworkError)) throw e;
    say("The server cannot be reached. Nothing was sent twice: click Participate again to retry.", "error");
  } finally {
    b.disabled = false;
  }
}

async function loadMine(reset) {
  if (reset) {
    mineCursor = "";
    $("mine").replaceChildren();
  }
  let r;
  try {
    r = await api(`/me/participations?limit=5${mineCursor ? "&cursor=" + encodeURIComponent(mineCursor) : ""}`);
  } catch {
    $("mine").append(el("li", { class: "bad" }, "Cannot load your participations (the server cannot be reached)."));
    return;
  }
  if (r.status !== 200) return;
  for (const v of r.body.items) {
    const href = `./?event=${encodeURIComponent(v.eventId)}`;
    $("mine").append(el("li", { dataset: { requestId: v.requestId } },
      el("a", { href }, v.eventId), ` · ${v.status}${v.resultCode ? " · " + v.resultCode : ""} · ${fmtTime(v.requestedAt)}`));
  }
  mineCursor = r.body.cursor || "";
  $("mine-more").hidden = !mineCursor;
}

async function main() {
  await start({ preset: 0 });
  $("event-input").value = eventId;
  $("participate").addEventListener("click", participate);
  $("mine-more").addEventListener("click", () => loadMine(false));
  onSignIn(async () => {
    pollRun++;
    $("request").hidden = true;
    say("");
    loadMine(true);
    if (!eventId) return;
    try {
      if (!(await loadEvent())) return;
    } catch {
      say("The server cannot be reached. Reload to try again.", "error");
      return;
    }
    const id = localStorage.getItem(storeKey());
    if (id) {
      $("request").hidden = false;
      $("request-id").textContent = id;
      poll(id);
    }
  });
  if (!user()) say(settings().dev ? "Choose who you are (dev sign-in) to participate." : "Waiting for sign-in.", "info");
}

main();
