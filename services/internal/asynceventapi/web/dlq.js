// The DLQ view for admins: up to 50 dead-lettered messages, not consumed
// (GET /admin/dlq?max=50).
import { $, api, el, fmtTime, NetworkError, onSignIn, problemText, say, start } from "./pacer.js";

async function load() {
  let r;
  try {
    r = await api("/admin/dlq?max=50");
  } catch (e) {
    if (!(e instanceof NetworkError)) throw e;
    say("The server cannot be reached. Reload to try again.", "error");
    return;
  }
  if (r.status !== 200) {
    say(r.status === 403 || r.status === 401 ? "The DLQ view needs the admin role." : problemText(r.body), "error");
    return;
  }
  say(r.body.messages.length ? "" : "The DLQ is empty.");
  $("main-depth").textContent = String(r.body.mainDepth);
  $("dead-depth").textContent = String(r.body.deadDepth);
  $("messages").replaceChildren(...r.body.messages.map((m) => el("tr", {},
    ...[m.messageId, String(m.receiveCount), fmtTime(m.sentAt), m.requestId || "", m.eventId || "", m.userId || "", m.raw || ""].map((t) => el("td", {}, t)))));
}

async function main() {
  await start({ preset: 2 });
  onSignIn(load);
}

main();
