// The document editor's test questions: answer them on the draft in the editor (unsaved), and
// start a new one from a question customers asked (fills a new row of the inline).
(function () {
  "use strict";
  function csrfToken() {
    var input = document.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }
  function setUpDraftRun() {
    var button = document.getElementById("kb-test-draft");
    var results = document.getElementById("kb-test-draft-results");
    if (!button || !results) { return; }
    button.addEventListener("click", function () {
      var data = new FormData();
      var title = document.getElementById("id_title");
      var body = document.getElementById("id_body");
      data.append("title", title ? title.value : "");
      data.append("body", body ? body.value : "");
      button.disabled = true;
      results.textContent = "Answering the test questions on this draft…";
      fetch(button.dataset.url, { method: "POST", body: data, headers: { "X-CSRFToken": csrfToken() }, credentials: "same-origin" })
        .then(function (response) { return response.text(); })
        .then(function (html) { results.innerHTML = html; })  // server-escaped fragment
        .catch(function () { results.textContent = "The test questions could not be answered."; })
        .finally(function () { button.disabled = false; });
    });
  }
  function setUpSuggestions() {
    document.querySelectorAll(".kb-use-as-test").forEach(function (button) {
      button.addEventListener("click", function () {
        var add = document.querySelector("#test_questions-group .add-row a");
        if (!add) { return; }
        add.click();
        var rows = document.querySelectorAll("#test_questions-group tr.form-row:not(.empty-form)");
        var input = rows.length ? rows[rows.length - 1].querySelector("input[name$='-question']") : null;
        if (input) {
          input.value = button.dataset.question;
          var facts = rows[rows.length - 1].querySelector("textarea[name$='-facts']");
          (facts || input).focus();
        }
      });
    });
  }
  document.addEventListener("DOMContentLoaded", function () { setUpDraftRun(); setUpSuggestions(); });
})();
