// The document editor: the body beside a live preview of the rendered page and the chunks it
// will produce (side by side on a wide screen, stacked on a narrow one; see document_preview.css).
(function () {
  "use strict";
  function csrfToken() {
    var input = document.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
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
    function refresh() {
      var data = new FormData();
      data.append("title", title ? title.value : "");
      data.append("body", body.value);
      fetch(url, { method: "POST", body: data, headers: { "X-CSRFToken": csrfToken() }, credentials: "same-origin" })
        .then(function (response) { return response.text(); })
        .then(function (html) { panel.innerHTML = html; })  // server-sanitised fragment
        .catch(function () { panel.textContent = "Preview unavailable."; });
    }
    function schedule() { clearTimeout(timer); timer = setTimeout(refresh, 400); }
    body.addEventListener("input", schedule);
    if (title) { title.addEventListener("input", schedule); }
    refresh();
  }
  document.addEventListener("DOMContentLoaded", setUp);
})();
