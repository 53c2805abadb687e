// Pacer's pages share this module: sign-in, API calls with retries, and
// DOM helpers. Nothing here renders text as HTML: el() sets textContent,
// so an event or runner name is shown as the characters it is.
//
// Sign-in. In dev mode (config.dev) the page shows a picker: the user id,
// roles and org it sends as X-Pacer-Dev-User / -Roles / -Org, which the
// services honour in dev mode only. Outside dev mode the page never reads a
// token from its URL: the embedding application (a parent window framing
// the page) sends it with
//   frame.contentWindow.postMessage({type: "pacer-token", token: jwt}, pageOrigin)
// after the page asked for it with {type: "pacer-token-request"} (sent to
// the parent on load and whenever a call gets a 401). A token message
// counts only from the parent window and from the page's own origin or one
// of config.embedOrigins (server.PageConfig.EmbedOrigins). The token is
// kept in memory only.

let config = { dev: false, imageBaseUrl: "" };
let token = "";
let identity = null; // dev mode: {user, roles, org}
const listeners = [];

/** el builds an element; string children become text nodes. */
export function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "class") e.className = v;
    else if (k === "dataset") Object.assign(e.dataset, v);
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

/** $ is document.getElementById. */
export const $ = (id) => document.getElementById(id);

/** say puts a message (text) in the element #message, with a kind for styling. */
export function say(text, kind = "info") {
  const m = $("message");
  m.textContent = text;
  m.dataset.kind = kind;
  m.hidden = text === "";
}

/** sleep resolves after ms. */
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** settings returns the page configuration from /ui/config.json. */
export const settings = () => config;

/** user is the signed-in user id ("" when not signed in). */
export function user() {
  if (config.dev) return identity ? identity.user : "";
  if (!token) return "";
  try {
    const p = JSON.parse(atob(token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")));
    return String(p.sub || "");
  } catch {
    return "";
  }
}

/** onSignIn calls f now (if signed in) and whenever the identity changes. */
export function onSignIn(f) {
  listeners.push(f);
  if (user()) f();
}

function changed() {
  for (const f of listeners) f();
}

function headers() {
  const h = { Accept: "application/json" };
  if (config.dev && identity) {
    h["X-Pacer-Dev-User"] = identity.user;
    if (identity.roles) h["X-Pacer-Dev-Roles"] = identity.roles;
    if (identity.org) h["X-Pacer-Dev-Org"] = identity.org;
  } else if (token) {
    h.Authorization = "Bearer " + token;
  }
  return h;
}

/** NetworkError: the server could not be reached after the retries. */
export class NetworkError extends Error {}

/**
 * api calls the service (same origin) and resolves to {status, body}.
 * Network failures, 502, 503 and 504 are retried with backoff
 * (opts.retries times, default 4); onRetry(attempt, delayMs) is told.
 * After the last retry it throws NetworkError. A 5xx problem named in
 * opts.final (e.g. ["human-check-unavailable"]: a retry would send a
 * challenge token again, and the user must be told) is answered as is,
 * never retried. opts.body, if set, is sent as JSON.
 */
export async function api(path, opts = {}) {
  const retries = opts.retries ?? 4;
  let delay = 400;
  for (let attempt = 0; ; attempt++) {
    let res = null;
    try {
      const init = { method: opts.method || "GET", headers: headers() };
      if (opts.body !== undefined) {
        init.headers["Content-Type"] = "application/json";
        init.body = JSON.stringify(opts.body);
      }
      res = await fetch(path, init);
    } catch {
      res = null;
    }
    if (res) {
      if (res.status === 401 && !config.dev) askForToken();
      const text = await res.text();
      let body = null;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        body = { detail: text };
      }
      if (![502, 503, 504].includes(res.status) || (opts.final || []).includes(problemName(body))) {
        return { status: res.status, body, headers: res.headers };
      }
    }
    if (attempt >= retries) throw new NetworkError("the server cannot be reached");
    if (opts.onRetry) opts.onRetry(attempt + 1, delay);
    await sleep(delay);
    delay = Math.min(delay * 2, 5000);
  }
}

/** problemText is the detail of a problem+json body, or its title. */
export const problemText = (body) => (body && (body.detail || body.title)) || "unexpected answer";

/** problemName is the last segment of a problem's type URI ("event-closed"). */
export const problemName = (body) => (body && body.type ? String(body.type).split("/").pop() : "");

function askForToken() {
  if (window.parent !== window) window.parent.postMessage({ type: "pacer-token-request" }, "*");
}

const presets = [
  { label: "user dev-user", user: "dev-user", roles: "", org: "" },
  { label: "user dev-user-2", user: "dev-user-2", roles: "", org: "" },
  { label: "admin dev-admin", user: "dev-admin", roles: "admin", org: "" },
  { label: "organizer of demo-org", user: "demo-organizer", roles: "organizer", org: "demo-org" },
];

function devPicker(box, preset) {
  const u = el("input", { id: "dev-user", size: "14", placeholder: "user id" });
  const r = el("input", { id: "dev-roles", size: "10", placeholder: "roles" });
  const o = el("input", { id: "dev-org", size: "10", placeholder: "org" });
  const show = () => {
    u.value = identity ? identity.user : "";
    r.value = identity ? identity.roles : "";
    o.value = identity ? identity.org : "";
  };
  const use = (id) => {
    identity = id.user ? { user: id.user, roles: id.roles, org: id.org } : null;
    localStorage.setItem("pacer.dev.identity", JSON.stringify(identity));
    show();
    changed();
  };
  const sel = el("select", { id: "dev-preset", "aria-label": "preset" }, el("option", { value: "" }, "choose…"));
  presets.forEach((p, i) => sel.append(el("option", { value: String(i) }, p.label)));
  sel.addEventListener("change", () => sel.value !== "" && use(presets[Number(sel.value)]));
  box.append(
    el("span", { class: "badge" }, "dev sign-in"), sel, u, r, o,
    el("button", { id: "dev-use", type: "button", onclick: () => use({ user: u.value.trim(), roles: r.value.trim(), org: o.value.trim() }) }, "Use"),
  );
  try {
    identity = JSON.parse(localStorage.getItem("pacer.dev.identity") || "null");
  } catch {
    identity = null;
  }
  if (!identity && preset !== undefined) identity = { ...presets[preset] };
  show();
}

/**
 * start loads the configuration and sets up sign-in in the element
 * #signin. preset (an index into the dev presets) is the dev identity
 * used when none was chosen before; public pages pass signIn=false.
 */
export async function start({ signIn = true, preset } = {}) {
  try {
    const r = await api("/ui/config.json");
    if (r.status === 200) config = r.body;
  } catch {
    // keep the defaults; the calls below will say the server is unreachable
  }
  const box = $("signin");
  if (!signIn || !box) return;
  if (config.dev) {
    devPicker(box, preset);
    return;
  }
  box.append(el("span", { id: "signin-state" }, "Waiting for sign-in from the embedding application…"));
  // The token comes only in a message from the embedding window, from
  // this origin or one /ui/config.json lists (embedOrigins); never from
  // the URL, which leaks into history, logs and Referer headers.
  const trusted = (origin) => origin === location.origin || (config.embedOrigins || []).includes(origin);
  window.addEventListener("message", (ev) => {
    if (ev.source !== window.parent || !trusted(ev.origin) || !ev.data || ev.data.type !== "pacer-token") return;
    token = String(ev.data.token || "");
    $("signin-state").textContent = token ? "Signed in as " + user() : "Signed out";
    changed();
  });
  askForToken();
}

/** fmtTime formats epoch milliseconds as local time ("" for 0). */
export const fmtTime = (ms) => (ms ? new Date(ms).toLocaleString() : "");
