// "Copy the tag" on an embed site's admin page (no inline script: the admin has the site's CSP).
(function () {
  "use strict";
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest(".widget-tag-copy");
    if (!button) { return; }
    var field = document.getElementById(button.getAttribute("data-copy"));
    var said = button.parentNode.querySelector(".widget-tag-copied");
    function say(text) { if (said) { said.textContent = text; } }
    field.select();
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(field.value).then(
        function () { say("Copied."); },
        function () { say("Selected: press Ctrl+C (⌘C) to copy."); }
      );
    } else {
      say(document.execCommand("copy") ? "Copied." : "Selected: press Ctrl+C (⌘C) to copy.");
    }
  });
})();
