// The site dictionary's pages (site-dictionary/index.html and the documentation pages that
// conf/demo/prepare.sh makes in site-dictionary/docs/): how this navigation arrived, from
// Navigation Timing and the demo's Server-Timing (the coding, the bytes, the dictionary the
// browser named), against the dictionary the server announces (dictionary.json, written when
// prepare.sh trained it), next to the same URL fetched without a dictionary and the Link header
// the server sent with it. The result also goes into body[data-arrival] as JSON.
(function () {
  'use strict';

  function set(id, parts) {
    var e = document.getElementById(id);
    if (e) { e.replaceChildren.apply(e, [].concat(parts)); }
  }

  document.addEventListener('mc-ready', function () {
    var nav = performance.getEntriesByType('navigation')[0];
    var info = fetch('/site-dictionary/dictionary.json', { cache: 'no-store' }).then(function (r) {
      return r.json();
    });
    Promise.all([info, MC.measure(location.pathname)]).then(function (got) {
      var dict = got[0], w = got[1], d = MC.describe(nav);
      var named = !d.dictionary ? null : d.dictionary === ':' + dict.sha256 + ':' ? 'site' : 'other';
      var link = w.headers.get('link');
      set('page-coding', d.coding);
      set('page-transfer', MC.bytes(d.wire) + ' on the wire (' + MC.bytes(d.encoded) +
          ' of body, the rest headers)');
      set('page-size', MC.bytes(d.decoded));
      set('page-source', [MC.sourceBadge(d), ' ' + (d.coding === 'dcz' ? MC.madeBy(d) : d.detail)]);
      set('page-dictionary', named === 'site'
        ? [MC.el('code', { text: dict.url }), ', the site dictionary (' + MC.bytes(dict.bytes) + ')']
        : named === 'other' ? 'another one: ' + d.dictionary
          : 'none: this browser does not hold the site dictionary yet');
      set('page-without', w.coding + ', ' + MC.bytes(w.encoded) + ' of body (' + MC.bytes(w.wire) +
          ' on the wire)' + (d.coding === 'dcz' && d.encoded && w.encoded
        ? ': the dictionary saved ' + Math.round(100 * (1 - d.encoded / w.encoded)) + ' %' : ''));
      set('page-link', link ? [MC.el('code', { text: link })] : 'none');
      set('dict-url', dict.url);
      set('dict-pages', String(dict.pages));
      set('dict-bytes', MC.bytes(dict.bytes));
      set('dict-sha', dict.hex);
      set('curl-site', 'curl -sk -o /dev/null -D - -H \'Accept-Encoding: dcz, zstd\' \\\n' +
          '     -H \'Available-Dictionary: :' + dict.sha256 + ':\' \\\n' +
          '     ' + location.origin + '/site-dictionary/docs/\n' +
          '# Content-Encoding: dcz, and the Link header that announces ' + dict.url);
      var result = { path: location.pathname, coding: d.coding, transfer: d.wire,
                     encoded: d.encoded, decoded: d.decoded, source: d.source,
                     moduleSource: d.moduleSource, dictionary: named, link: link,
                     without: { coding: w.coding, encoded: w.encoded, transfer: w.wire } };
      var train = document.getElementById('train');
      if (!train) { return result; }
      return fetch('/site-dictionary/train.txt', { cache: 'no-store' }).then(function (r) {
        return r.text();
      }).then(function (t) { train.textContent = t; return result; });
    }).then(function (result) {
      document.body.setAttribute('data-arrival', JSON.stringify(result));
    }, function (e) {
      document.body.setAttribute('data-arrival', JSON.stringify({ error: String(e) }));
    });
  });
})();
