// The photo pages. Runners (index.html, no sign-in): a bib's photos in a
// published event, where its organizer turned it on their bib found by
// name, and the photos taken when the bib passed each camera ("photos
// near my times", by the runner's split times; ?window= seconds).
// Organizers (organizer.html): by bib or photographer, optionally in one
// event, an event's gallery, or an event's runners by name. Newest first, one page
// at a time ("More photos" follows nextCursor). Every search is in the
// URL's query (never a token), so a result can be linked and reloaded.
import { $, api, el, NetworkError, onSignIn, problemText, say, settings, start } from "./pacer.js";

const runner = document.body.dataset.mode === "runner";

function image(p, extra = [], data = {}) {
  const base = settings().imageBaseUrl;
  const cap = [new Date(p.createdAt).toLocaleString(), "bibs " + (p.bibs || []).join(", ")];
  const who = p.photographerDisplayName || p.photographerHandle || p.photographerId;
  if (who) cap.push(who);
  cap.push(...extra);
  const fig = el("figure", { dataset: { ulid: p.ulid, ...data } });
  if (base) fig.append(el("img", { src: `${base}/${p.processedKey.split("/").map(encodeURIComponent).join("/")}`, alt: `photo ${p.ulid}`, loading: "lazy" }));
  else fig.append(el("div", { class: "noimage" }, p.processedKey));
  fig.append(el("figcaption", {}, cap.join(" · ")));
  return fig;
}

// nearImage is a photo found by the runner's passing time: which split
// matched it, and whether the bib was recognized on it.
function nearImage(n) {
  const extra = [`near ${n.match.pointName}`, n.hasBib ? "your bib is on it" : "found by your time"];
  return image(n.photo, extra, { point: n.match.pointId, hasBib: String(n.hasBib) });
}

// lister pages a search into a gallery: ids name its gallery, "more"
// button and status line; render makes a figure of one result; tell(text,
// kind) shows the status.
function lister(ids, render, tell) {
  let next = null; // () => the next page's path, or null
  let shown = 0;
  async function page(path, reset) {
    if (reset) {
      $(ids.gallery).replaceChildren();
      shown = 0;
    }
    $(ids.more).hidden = true;
    tell("Searching…");
    let r;
    try {
      r = await api(path, { onRetry: (n, d) => tell(`Cannot reach the server; retry ${n} in ${d / 1000} s…`, "warn") });
    } catch (e) {
      if (!(e instanceof NetworkError)) throw e;
      tell("The server cannot be reached. Try again in a moment.", "error");
      return null;
    }
    if (r.status !== 200) {
      tell(r.status === 404 ? "No such event (or it is not published)." : problemText(r.body), "error");
      return null;
    }
    const b = r.body;
    for (const p of b.photos) $(ids.gallery).append(render(p));
    shown += b.photos.length;
    tell(shown ? `${shown} photo${shown === 1 ? "" : "s"}${b.nextCursor ? ", more to come" : ""}.` : "No photos found.");
    if (b.nextCursor) {
      const sep = path.includes("?") ? "&" : "?";
      const base = path.replace(/[?&]cursor=[^&]*/, "");
      next = () => `${base}${sep}cursor=${encodeURIComponent(b.nextCursor)}`;
      $(ids.more).hidden = false;
    } else next = null;
    return b;
  }
  $(ids.more).addEventListener("click", () => next && page(next(), false));
  return page;
}

const main_ = lister({ gallery: "gallery", more: "more" }, (p) => image(p), say);

// page lists the main search, and names the runner on the first page.
async function page(path, reset) {
  const b = await main_(path, reset);
  if (b && reset && b.runner) $("heading").textContent = `Bib ${b.bib}: ${b.runner.name}`;
}

// The runner page's "photos near my times": photos taken when the bib
// passed each camera, by the runner's split times.
const near = runner
  ? lister({ gallery: "nearby-gallery", more: "nearby-more" }, nearImage, (text, kind = "info") => {
      const m = $("nearby-message");
      m.textContent = text;
      m.dataset.kind = kind;
    })
  : null;

// names lists the runners a name search found, each a link to their bib's
// photos (on this page), with their photo count.
async function names(path, ev) {
  $("gallery").replaceChildren();
  $("runners").replaceChildren();
  $("more").hidden = true;
  say("Searching…");
  let r;
  try {
    r = await api(path);
  } catch (e) {
    if (!(e instanceof NetworkError)) throw e;
    return say("The server cannot be reached. Try again in a moment.", "error");
  }
  if (r.status !== 200) return say(r.status === 404 ? "No such event (or it cannot be searched by name)." : problemText(r.body), "error");
  for (const m of r.body.runners) {
    const q = runner ? { event: ev, bib: m.bib } : { kind: "bib", event: ev, term: m.bib };
    const a = el("a", { href: "?" + new URLSearchParams(q) }, m.name);
    $("runners").append(el("li", { dataset: { bib: m.bib } }, a, ` · bib ${m.bib} · ${m.photos} photo${m.photos === 1 ? "" : "s"}`));
  }
  say(r.body.runners.length ? "Pick your name." : "No runner of that name.");
}

// nameBox shows the runner page's name box when the event allows it.
async function nameBox(ev) {
  if (!ev) return false;
  try {
    const r = await api(`/public/events/${encodeURIComponent(ev)}`);
    $("namebox").hidden = !(r.status === 200 && r.body.nameSearch);
  } catch (e) {
    if (!(e instanceof NetworkError)) throw e;
  }
  return !$("namebox").hidden;
}

async function search() {
  const q = new URLSearchParams(location.search);
  const ev = (q.get("event") || "").trim();
  $("event").value = ev;
  $("heading").textContent = "";
  $("runners").replaceChildren();
  const e = encodeURIComponent(ev);
  const limit = Number(q.get("limit")) || 12;
  if (runner) {
    const bib = (q.get("bib") || "").trim();
    const name = (q.get("name") || "").trim();
    $("bib").value = bib;
    $("name").value = name;
    const byName = await nameBox(ev);
    if (!bib && name && byName) return names(`/public/events/${e}/runners/search?name=${encodeURIComponent(name)}`, ev);
    if (!ev || !bib) return say(byName ? "Enter the event and your bib number or your name." : "Enter the event and your bib number.");
    $("heading").textContent = `Bib ${bib}`;
    const win = Number(q.get("window")) || 60;
    $("nearby").hidden = false;
    near(`/public/events/${e}/bibs/${encodeURIComponent(bib)}/nearby-photos?window=${win}&limit=${limit}`, true);
    return page(`/public/events/${e}/bibs/${encodeURIComponent(bib)}/photos?limit=${limit}`, true);
  }
  const kind = q.get("kind") || "bib";
  const term = (q.get("term") || "").trim();
  $("kind").value = kind;
  $("term").value = term;
  if (kind === "gallery") {
    if (!ev) return say("Enter the event.");
    $("heading").textContent = `Gallery of ${ev}`;
    return page(`/events/${e}/photos?limit=${limit}`, true);
  }
  if (!term) return say(kind === "bib" ? "Enter the event and a bib." : kind === "name" ? "Enter the event and a name." : "Enter a photographer id (and optionally an event).");
  if (kind === "name") {
    if (!ev) return say("A name search needs the event.");
    $("heading").textContent = `Runners named like ${term}`;
    return names(`/events/${e}/runners/search?name=${encodeURIComponent(term)}&limit=${Math.min(limit, 50)}`, ev);
  }
  if (kind === "bib") {
    if (!ev) return say("A bib search needs the event.");
    $("heading").textContent = `Bib ${term}`;
    return page(`/events/${e}/bibs/${encodeURIComponent(term)}/photos?limit=${limit}`, true);
  }
  $("heading").textContent = `Photographer ${term}` + (ev ? ` in ${ev}` : "");
  return page(`/photographers/${encodeURIComponent(term)}/photos?limit=${limit}${ev ? "&eventId=" + e : ""}`, true);
}

async function main() {
  await start({ signIn: !runner, preset: 3 });
  if (runner) search();
  else onSignIn(search);
}

main();
