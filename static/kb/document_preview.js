// The document editor: the body beside a live preview of the rendered page and the chunks it
// will produce (side by side on a wide screen, stacked on a narrow one; see document_preview.css).
// The rendered page follows the caret: it scrolls to the heading of the section being edited.
(function () {
  "use strict";
  var FENCE = /^\s{0,3}(`{3,}|~{3,})/;
  var ATX_HEADING = /^\s{0,3}#{1,6}(\s|$)/;
  var SETEXT_UNDERLINE = /^\s{0,3}(=+|-+)\s*$/;

  function csrfToken() {
    var input = document.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  // How many headings the text has up to and including the caret's line: the caret is in the
  // section of the last of them (0: before the first heading). Code fences are skipped, since a
  // "#" in code is not a heading; a setext heading ("Title" over "===") counts on its underline.
  function headingsBefore(text, caret) {
    var lines = text.slice(0, caret).split("\n");
    var count = 0, fence = null, previous = "";
    for (var i = 0; i < lines.length; i++) {
      var line = lines[i];
      var opened = FENCE.exec(line);
      if (fence) {
        if (opened && opened[1][0] === fence[0] && opened[1].length >= fence.length) { fence = null; }
      } else if (opened) {
        fence = opened[1];
      } else if (ATX_HEADING.test(line)) {
        count += 1;
      } else if (SETEXT_UNDERLINE.test(line) && previous.trim() && !ATX_HEADING.test(previous) &&
                 !/^\s*([-*+]|\d+[.)])\s/.test(previous)) {
        count += 1;
      }
      previous = fence ? "" : line;
    }
    return count;
  }

  function setUp() {
    var body = document.getElementById("id_body");
    var title = document.getElementById("id_title");
    if (!body) { return; }
    var panel = document.createElement("div");
    panel.className = "kb-preview";
    panel.setAttribute("aria-live", "polite");
    panel.setAttribute("aria-label", "Preview");
    var split = document.createElement("div");
    split.className = "kb-editor-split";
    body.before(split);
    split.append(body, panel);
    var url = window.location.pathname.replace(/\/(add|\d+\/change)\/?$/, "/preview/");
    var timer = null;
    var followed = -1;

    // Scroll the rendered page so the heading of the caret's section is at its top.
    function follow(force) {
      var page = panel.querySelector(".kb-preview-page");
      var rendered = page && page.querySelector(".document-body");
      if (!rendered) { return; }
      var index = headingsBefore(body.value, body.selectionStart);
      if (index === followed && !force) { return; }
      followed = index;
      var headings = rendered.querySelectorAll("h1, h2, h3, h4, h5, h6");
      var current = rendered.querySelector(".kb-preview-current");
      if (current) { current.classList.remove("kb-preview-current"); }
      if (index === 0 || !headings.length) { page.scrollTop = 0; return; }
      var heading = headings[Math.min(index, headings.length) - 1];
      heading.classList.add("kb-preview-current");
      page.scrollTop += heading.getBoundingClientRect().top - page.getBoundingClientRect().top - 8;
    }

    function refresh() {
      var data = new FormData();
      data.append("title", title ? title.value : "");
      data.append("body", body.value);
      fetch(url, { method: "POST", body: data, headers: { "X-CSRFToken": csrfToken() }, credentials: "same-origin" })
        .then(function (response) { return response.text(); })
        .then(function (html) { panel.innerHTML = html; follow(true); })  // server-sanitised fragment
        .catch(function () { panel.textContent = "Preview unavailable."; });
    }
    function schedule() { clearTimeout(timer); timer = setTimeout(refresh, 400); }
    body.addEventListener("input", schedule);
    ["keyup", "click", "focus"].forEach(function (name) {
      body.addEventListener(name, function () { follow(false); });
    });
    // A new width reflows the rendered page: find the caret's heading again.
    window.addEventListener("resize", function () { follow(true); });
    if (title) { title.addEventListener("input", schedule); }
    refresh();
  }
  document.addEventListener("DOMContentLoaded", setUp);
})();
