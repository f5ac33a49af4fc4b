// The chat in the website widget's iframe: say to the host page's launcher (widget.js) that the
// chat is here, take the focus when the panel opens, ask it to close on Escape, and open links
// to other pages in a new tab, so a customer reading a source keeps the page they were on.
//
// Messages to the parent hold nothing but their type, so they go to any origin ("*"): which
// origins may frame this page at all is the server's frame-ancestors header.
(function () {
  "use strict";
  if (window.parent === window) { return; }  // opened on its own: nothing to talk to

  function tell(type) { window.parent.postMessage({ groundwork: type }, "*"); }

  function markLinks(root) {
    var links = root.querySelectorAll ? root.querySelectorAll("a[href]") : [];
    for (var i = 0; i < links.length; i++) {
      var link = links[i];
      if (link.hasAttribute("hx-get")) { continue; }  // opens in the chat ("Contact support")
      var target = new URL(link.getAttribute("href"), document.baseURI);
      var samePage = target.origin === location.origin && target.pathname === location.pathname;
      if (samePage && target.hash) { continue; }  // a citation marker: the source list below
      link.setAttribute("target", "_blank");
      link.setAttribute("rel", "noopener");
    }
  }

  document.addEventListener("DOMContentLoaded", function () {
    markLinks(document);
    // Answers arrive later (htmx swaps, the stream's final event): mark their links as they land.
    new MutationObserver(function (changes) {
      changes.forEach(function (change) {
        change.addedNodes.forEach(function (node) {
          if (node.nodeType === Node.ELEMENT_NODE) {
            if (node.matches("a[href]")) { markLinks(node.parentNode); } else { markLinks(node); }
          }
        });
      });
    }).observe(document.body, { childList: true, subtree: true });
    tell("ready");
  });

  window.addEventListener("message", function (event) {
    if (event.source !== window.parent || !event.data || event.data.groundwork !== "focus") { return; }
    var box = document.getElementById("question");
    if (box) { box.focus(); }
  });

  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && !event.isComposing && !event.defaultPrevented) { tell("close"); }
  });
})();
