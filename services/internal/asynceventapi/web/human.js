// The human check of the participation page: an event whose
// humanCheck.required is true takes a participation only with a challenge
// provider's token (docs/ratelimit.md, Human check). The provider's widget
// (its script and site key from /ui/config.json: humanWidget) is rendered
// in #human and hands the page a token, which participate sends as
// humanToken. Cloudflare Turnstile, hCaptcha and reCAPTCHA render the same
// way (render(element, {sitekey, callback, ...}), reset(id)).
import { $, el, settings } from "./pacer.js";

let token = "";
let widget = null; // {api, id} once rendered
let script = null; // the script's load, once started

// provider is the loaded widget script's API.
const provider = () => window.turnstile || window.hcaptcha || window.grecaptcha;

function load(src) {
  if (!script) {
    script = new Promise((resolve, reject) => {
      document.head.append(el("script", { src, async: "", onload: resolve, onerror: () => reject(new Error("the challenge widget did not load")) }));
    });
  }
  return script;
}

/**
 * setupHumanCheck shows the widget when ev requires a human check (and
 * hides it otherwise). It resolves to "" when all is ready, else to a
 * message to show.
 */
export async function setupHumanCheck(ev) {
  const box = $("human");
  token = "";
  const required = !!(ev.humanCheck && ev.humanCheck.required);
  box.hidden = !required;
  box.dataset.state = required ? "waiting" : "";
  if (!required) return "";
  const w = settings().humanWidget;
  if (!w || !w.script || !w.siteKey) return "This event requires a human check, which this page is not set up to show.";
  try {
    await load(w.script);
  } catch (e) {
    return `${e.message}: reload to try again.`;
  }
  const api = provider();
  if (!api || !api.render) return "The challenge widget did not load: reload to try again.";
  if (api === window.grecaptcha && api.ready) await new Promise((r) => api.ready(r));
  if (widget) {
    api.reset(widget.id);
    return "";
  }
  const target = el("div", { id: "human-widget" });
  box.replaceChildren(target);
  const id = api.render(target, {
    sitekey: w.siteKey,
    callback: (t) => { token = t; box.dataset.state = "ready"; },
    "expired-callback": () => { token = ""; box.dataset.state = "waiting"; },
    "error-callback": () => { token = ""; box.dataset.state = "error"; },
  });
  widget = { api, id };
  return "";
}

/** humanToken is the widget's token ("" until it has given one). */
export const humanToken = () => token;

/** spendHumanToken forgets the token (a provider takes each once) and asks the widget for a new one. */
export function spendHumanToken() {
  token = "";
  if (!widget) return;
  $("human").dataset.state = "waiting";
  try {
    widget.api.reset(widget.id);
  } catch {
    // a widget gone away shows nothing to reset
  }
}
