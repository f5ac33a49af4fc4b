// Groundwork's website widget. One tag on any page:
//
//   <script src="https://help.example.com/static/assistant/widget.js"
//           data-site-key="site_..." async></script>
//
// adds a launcher button and a panel holding the chat, which is served from Groundwork's own
// origin in an iframe (/embed/<site key>/): its Content-Security-Policy, cookies and CSRF stay
// Groundwork's, and the host page needs nothing but the tag (its CSP: script-src and frame-src
// for that origin). The launcher and panel live in a shadow root, styled only from inside it,
// so the page's styles cannot reach them and theirs cannot reach the page; nothing is added to
// the page's globals. Optional: data-label="…" names the launcher (default "Help").
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script || !script.src) { return; }
  var siteKey = script.getAttribute("data-site-key");
  if (!siteKey) {
    console.error("Groundwork widget: the script tag needs data-site-key (copy the tag from the admin, Embed sites).");
    return;
  }
  if (document.querySelector("groundwork-widget")) { return; }  // the tag pasted twice

  var origin = new URL(script.src, document.baseURI).origin;
  var frameUrl = origin + "/embed/" + encodeURIComponent(siteKey) + "/";
  var label = script.getAttribute("data-label") || "Help";
  // After the frame's load event, this long for its "ready" before it counts as refused (a
  // refused frame loads the browser's error page, which never says it).
  var READY_GRACE_MS = 2000;

  var CSS = [
    ":host { all: initial !important; display: block !important; }",
    "*, *::before, *::after { box-sizing: border-box; }",
    ".launcher { position: fixed; right: 20px; bottom: 20px; z-index: 2147483000; display: inline-flex;",
    "  align-items: center; gap: 8px; min-height: 48px; margin: 0; padding: 0 20px; border: 0; border-radius: 24px;",
    "  background: #0b5cad; color: #fff; font: 600 16px/1.2 system-ui, -apple-system, 'Segoe UI', sans-serif;",
    "  cursor: pointer; box-shadow: 0 4px 14px rgba(0, 0, 0, .25); }",
    ".launcher:hover { background: #094a8c; }",
    ".launcher:focus-visible, .close:focus-visible, .panel:focus-visible { outline: 3px solid #ffbf47; outline-offset: 2px; }",
    ".launcher svg, .close svg { width: 20px; height: 20px; flex: none; fill: currentColor; }",
    ".panel { position: fixed; right: 20px; bottom: 84px; z-index: 2147483001; display: flex; flex-direction: column;",
    "  width: 400px; max-width: calc(100vw - 40px); height: 640px; max-height: calc(100vh - 108px);",
    "  background: #fff; color: #1b1f24; border-radius: 12px; overflow: hidden;",
    "  box-shadow: 0 8px 30px rgba(0, 0, 0, .3); font: 15px/1.4 system-ui, -apple-system, 'Segoe UI', sans-serif; }",
    ".panel[hidden] { display: none; }",
    ".header { display: flex; align-items: center; justify-content: space-between; gap: 8px; flex: none;",
    "  padding: 4px 4px 4px 16px; background: #0b5cad; color: #fff; }",
    ".title { margin: 0; font-weight: 600; font-size: 16px; }",
    ".close { display: inline-flex; align-items: center; justify-content: center; width: 44px; height: 44px;",
    "  margin: 0; padding: 0; border: 0; border-radius: 8px; background: transparent; color: #fff; cursor: pointer; }",
    ".close:hover { background: rgba(255, 255, 255, .15); }",
    ".status { margin: 16px; color: #4a5563; }",
    ".status[hidden], iframe[hidden] { display: none; }",
    "iframe { display: block; flex: 1; width: 100%; min-height: 0; border: 0; background: #fff; }",
    // A phone: the panel is the whole screen, over the launcher (its close button is at the top).
    "@media (max-width: 480px) {",
    "  .panel { inset: 0; width: 100%; max-width: none; height: 100%; max-height: none; border-radius: 0; }",
    "}",
  ].join("\n");
  var ICON_CHAT = "M4 3h16a2 2 0 0 1 2 2v11a2 2 0 0 1-2 2H9l-5 4v-4H4a2 2 0 0 1-2-2V5a2 2 0 0 1 2-2z";
  var ICON_CLOSE = "M6.4 5 12 10.6 17.6 5 19 6.4 13.4 12 19 17.6 17.6 19 12 13.4 6.4 19 5 17.6 10.6 12 5 6.4z";

  function element(name, attributes, children) {
    var node = document.createElement(name);
    Object.keys(attributes || {}).forEach(function (key) { node.setAttribute(key, attributes[key]); });
    (children || []).forEach(function (child) {
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }

  function icon(path) {
    var svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("viewBox", "0 0 24 24");
    svg.setAttribute("aria-hidden", "true");
    svg.setAttribute("focusable", "false");
    var shape = document.createElementNS("http://www.w3.org/2000/svg", "path");
    shape.setAttribute("d", path);
    svg.appendChild(shape);
    return svg;
  }

  function styleInto(root) {
    // A constructed stylesheet is not an inline <style>, which a host page's CSP (style-src
    // without 'unsafe-inline') would block; browsers without one get the <style>.
    try {
      var sheet = new CSSStyleSheet();
      sheet.replaceSync(CSS);
      root.adoptedStyleSheets = [sheet];
    } catch (error) {
      root.appendChild(element("style", {}, [CSS]));
    }
  }

  var host = document.createElement("groundwork-widget");
  // Open, not closed: a closed root keeps out no one who can run script in the page (the page's
  // own scripts are trusted there anyway), and an open one lets tests and audit tools reach it.
  var shadow = host.attachShadow({ mode: "open" });
  styleInto(shadow);

  var launcher = element("button", {
    type: "button", "class": "launcher", "aria-expanded": "false", "aria-controls": "panel",
    "aria-label": label,
  }, [icon(ICON_CHAT), label]);
  var close = element("button", { type: "button", "class": "close", "aria-label": "Close " + label }, [icon(ICON_CLOSE)]);
  var title = element("p", { "class": "title", id: "panel-title" }, [label]);
  var status = element("p", { "class": "status", role: "status" }, ["Loading…"]);
  var panel = element("div", {
    "class": "panel", id: "panel", role: "dialog", "aria-labelledby": "panel-title", tabindex: "-1",
  }, [element("div", { "class": "header" }, [title, close]), status]);
  panel.hidden = true;
  // The button first, then what it opens: Tab goes from the launcher into the panel.
  shadow.appendChild(launcher);
  shadow.appendChild(panel);

  var frame = null;
  var ready = false;
  var refusedTimer = null;

  function frameLoaded() {
    if (ready) { return; }
    clearTimeout(refusedTimer);
    refusedTimer = setTimeout(function () {
      if (ready) { return; }
      // Refused (a site not on the key's list, a key switched off) or unreachable: the frame
      // stays hidden, so nothing but this line shows.
      status.textContent = "Help isn't available on this page right now.";
    }, READY_GRACE_MS);
  }

  function frameCreate() {
    frame = element("iframe", { src: frameUrl, title: label + ": ask our help center" });
    frame.hidden = true;
    frame.addEventListener("load", frameLoaded);
    panel.appendChild(frame);
  }

  function focusIntoFrame() {
    frame.focus();
    frame.contentWindow.postMessage({ groundwork: "focus" }, origin);
  }

  function open() {
    if (!frame) { frameCreate(); }
    panel.hidden = false;
    launcher.setAttribute("aria-expanded", "true");
    if (ready) { focusIntoFrame(); } else { panel.focus(); }
  }

  function shut() {
    if (panel.hidden) { return; }
    panel.hidden = true;
    launcher.setAttribute("aria-expanded", "false");
    launcher.focus();
  }

  launcher.addEventListener("click", function () { if (panel.hidden) { open(); } else { shut(); } });
  close.addEventListener("click", shut);
  shadow.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && !panel.hidden) { event.stopPropagation(); shut(); }
  });

  window.addEventListener("message", function (event) {
    if (!frame || event.source !== frame.contentWindow || event.origin !== origin) { return; }
    var type = event.data && event.data.groundwork;
    if (type === "ready") {
      ready = true;
      clearTimeout(refusedTimer);
      status.hidden = true;
      frame.hidden = false;
      var focusHere = shadow.activeElement === panel;
      if (!panel.hidden && focusHere) { focusIntoFrame(); }
    } else if (type === "close") {
      shut();
    }
  });

  (document.body || document.documentElement).appendChild(host);
})();
