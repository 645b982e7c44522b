// Demo script: shows how this page was encoded, and marks the page as rendered.
(function () {
  'use strict';
  function show(text) {
    var el = document.getElementById('encoding');
    if (el) { el.textContent = text; }
  }
  var entries = (window.performance && performance.getEntriesByType) ? performance.getEntriesByType('navigation') : [];
  var nav = entries.length ? entries[0] : null;
  if (nav && nav.encodedBodySize && nav.decodedBodySize) {
    var pct = Math.round(100 * nav.encodedBodySize / nav.decodedBodySize);
    show(nav.encodedBodySize + ' bytes sent for ' + nav.decodedBodySize + ' (' + pct + '%)');
  } else {
    show('see the Content-Encoding response header');
  }
  document.body.setAttribute('data-ready', 'yes');
})();
