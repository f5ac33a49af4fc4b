// The chat page's behaviour beyond htmx: keep the question box ready for a follow-up, say when
// an answer is done, and stop a stream that cannot connect instead of retrying forever.
(function () {
  "use strict";
  var MAX_STREAM_ERRORS = 3;

  function form() { return document.getElementById("ask-form"); }
  function box() { return document.getElementById("question"); }
  function errorArea() { return document.getElementById("ask-error"); }

  function showError(text) {
    var area = errorArea();
    if (!area) { return; }
    var p = document.createElement("p");
    p.className = "ask-error-text";
    p.textContent = text;
    area.replaceChildren(p);
    box().setAttribute("aria-invalid", "true");
  }

  document.addEventListener("DOMContentLoaded", function () {
    var hint = document.getElementById("question-hint");
    if (hint) { hint.textContent += " Press Enter to send, Shift+Enter for a new line."; }
  });

  document.addEventListener("keydown", function (event) {
    // Enter sends, Shift+Enter adds a line (as in most chat boxes); IME composition is left alone.
    if (event.target === box() && event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form().requestSubmit();
    }
  });

  document.addEventListener("htmx:beforeRequest", function (event) {
    if (event.detail.elt === form()) {
      errorArea().replaceChildren();
      box().removeAttribute("aria-invalid");
    }
  });

  document.addEventListener("htmx:afterRequest", function (event) {
    if (event.detail.elt !== form()) { return; }
    var status = event.detail.xhr ? event.detail.xhr.status : 0;
    if (status >= 200 && status < 300) {
      box().value = "";
      box().removeAttribute("aria-invalid");
      box().focus();  // ready for a follow-up; the answer is announced by its live region
      var turns = document.querySelectorAll("#conversation > .turn");
      if (turns.length) { turns[turns.length - 1].scrollIntoView({ block: "start", behavior: "smooth" }); }
    } else if (status === 400 || status === 429) {
      box().setAttribute("aria-invalid", "true");  // the reason was swapped into the alert
      box().focus();
    } else if (status === 403) {
      showError("Your session has expired. Please reload the page and ask again.");
    } else {
      showError("Sorry, we couldn't send your question. Please check your connection and try again.");
    }
  });

  document.addEventListener("htmx:sseBeforeMessage", function (event) {
    var answer = event.target.closest(".answer");
    if (!answer) { return; }
    var waiting = answer.querySelector(".answer-stream > .answer-waiting");
    if (waiting) { waiting.remove(); }
  });

  document.addEventListener("htmx:afterSwap", function (event) {
    // The SSE extension's swaps carry no detail.target: the event fires on the target itself.
    var target = event.target;
    if (target && target.classList && target.classList.contains("answer")) {
      target.removeAttribute("aria-busy");  // the final answer is in: announce it
    }
  });

  document.addEventListener("htmx:sseError", function (event) {
    var stream = event.target;
    var errors = (Number(stream.dataset.streamErrors) || 0) + 1;
    stream.dataset.streamErrors = String(errors);
    if (errors < MAX_STREAM_ERRORS) { return; }
    // Without sse-connect the extension's scheduled reconnect finds nothing to do.
    stream.removeAttribute("sse-connect");
    if (event.detail && event.detail.source) { event.detail.source.close(); }
    var answer = stream.closest(".answer");
    var p = document.createElement("p");
    p.className = "notice notice-failed";
    p.textContent = "We lost the connection while answering. Reload the page to see the answer.";
    stream.replaceWith(p);
    if (answer) { answer.removeAttribute("aria-busy"); }
  });
})();
