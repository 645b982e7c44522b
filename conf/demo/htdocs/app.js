// mod_multicompress demo: what every page shares (no framework, no build step). It draws the
// menu of the demo's pages, and the table of every resource the page loaded: its coding, the
// bytes on the wire against the decoded bytes (Resource Timing), and where the server took it
// from (the Server-Timing header the demo configuration adds: live, sidecar, cache, identity;
// dcz is "dictionary"). Pages call MC.* for their own panels.
(function () {
  'use strict';
  var MC = window.MC = {};

  // The demo's pages, in menu order. A new page: write it at `href` (copy dictionary/index.html),
  // fill its "# ---- panel: NAME" block in httpd.conf.in (the page shows it where it says
  // @CONFIG:NAME@), and add it to PAGES in tests/browser/demo_check.mjs and a check of its values
  // to tests/integration/test_497_demo.py.
  MC.PANELS = [
    { id: 'overview', href: '/', title: 'Overview' },
    { id: 'negotiation', href: '/negotiation/', title: 'Negotiation',
      what: 'What this browser got, and what other Accept-Encoding headers get.' },
    { id: 'per-directory', href: '/per-directory/', title: 'Per directory',
      what: 'Other codings and levels in other directories.' },
    { id: 'sidecars', href: '/sidecars/', title: 'Sidecars',
      what: 'Files compressed once by multicompress-precompress when the demo started.' },
    { id: 'cache', href: '/cache/', title: 'Cache',
      what: 'The first request compressed live, the next ones read from the store.' },
    { id: 'streaming', href: '/streaming/', title: 'Streaming',
      what: 'A CGI\'s lines arrive compressed, as they are printed.' },
    { id: 'request-body', href: '/request-body/', title: 'Request bodies',
      what: 'A gzip request body reaches the CGI decoded.' },
    { id: 'dictionary', href: '/dictionary/', title: 'Dictionaries',
      what: 'A hashed bundle updated from one release to the next, as dcz.' },
    { id: 'delta-sidecars', href: '/delta-sidecars/', title: 'Delta sidecars',
      what: 'The deltas between releases, FILE.dcz-<hash>, written once by ' +
            'multicompress-precompress and sent as they are.' },
    { id: 'site-dictionary', href: '/site-dictionary/', title: 'Site dictionary',
      what: 'A dictionary trained on the site\'s pages, announced with Link: the next page ' +
            'arrives as dcz.' },
    { id: 'status', href: '/status/', title: 'Status page',
      what: 'The module\'s section of /server-status, with its picture.' },
    { id: 'prometheus', href: '/prometheus/', title: 'Prometheus',
      what: 'The same counters as a scrape target.' },
    { id: 'cpu-budget', href: '/cpu-budget/', title: 'CPU budget',
      what: 'Load the server and watch the levels step down.' },
    { id: 'cross-site', href: '/cross-site/', title: 'Cross-site policy',
      what: 'No compression for cross-site requests with cookies (BREACH).' },
  ];

  MC.bytes = function (n) {
    if (n === null || n === undefined || isNaN(n)) { return '?'; }
    if (n < 1000) { return n + ' B'; }
    if (n < 1e6) { return (n / 1e3).toFixed(n < 1e4 ? 2 : 1) + ' kB'; }
    return (n / 1e6).toFixed(2) + ' MB';
  };

  MC.el = function (tag, attrs, children) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === 'text') { e.textContent = attrs[k]; } else { e.setAttribute(k, attrs[k]); }
    });
    (children || []).forEach(function (c) {
      e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    });
    return e;
  };

  // Server-Timing entries the demo configuration adds, as {name: description}.
  MC.serverTiming = function (entry) {
    var out = {};
    (entry.serverTiming || []).forEach(function (s) { out[s.name] = s.description; });
    return out;
  };

  // One resource as the page shows it.
  MC.describe = function (entry) {
    var st = MC.serverTiming(entry);
    var url = new URL(entry.name, location.href);
    var coding = entry.contentEncoding || st['mc-coding'] || '';
    var d = {
      url: url.href, path: url.origin === location.origin ? url.pathname + url.search : url.href,
      type: entry.entryType === 'navigation' ? 'this page' : entry.initiatorType,
      coding: coding || 'identity', wire: entry.transferSize, encoded: entry.encodedBodySize,
      decoded: entry.decodedBodySize, protocol: entry.nextHopProtocol,
      moduleSource: st['mc-source'] || null, accept: st['mc-accept'] || null,
      dictionary: st['mc-dictionary'] || null, source: 'none', detail: '',
    };
    if (entry.transferSize === 0 && entry.decodedBodySize > 0) {
      d.source = 'browser';
      d.detail = 'from the browser\'s cache: nothing on the wire';
    } else if (coding === 'dcz') {
      // Any dcz response: a bundle release against another one (from the delta sidecar
      // FILE.dcz-<hash> the tool wrote, its module source then "sidecar"), or a page against
      // the site dictionary its Link header announced.
      d.source = 'dictionary';
      d.detail = 'against a dictionary this browser held' + (d.moduleSource ? ': ' + MC.madeBy(d) : '');
    } else if (d.moduleSource) {
      d.source = d.moduleSource;
    } else {
      d.detail = 'not seen by the module (or no Server-Timing)';
    }
    return d;
  };

  // Base64 (a Structured Field byte sequence's content) as lower-case hex.
  MC.hex = function (b64) {
    try {
      return Array.prototype.map.call(atob(b64), function (c) {
        return ('0' + c.charCodeAt(0).toString(16)).slice(-2);
      }).join('');
    } catch (e) { return ''; }
  };

  // How the module made a dcz response: what its mc-source says.
  MC.madeBy = function (d) {
    return { live: 'compressed now against it', cache: 'from the cache (compressed against it earlier)',
             sidecar: 'sent from a delta sidecar, no compression' }[d.moduleSource] || '';
  };

  MC.sourceBadge = function (d) {
    var label = { browser: 'browser cache', none: '-' }[d.source] || d.source;
    return MC.el('span', { class: 'source ' + d.source, title: d.detail, text: label });
  };

  MC.entries = function () {
    return performance.getEntriesByType('navigation').concat(
      performance.getEntriesByType('resource'));
  };

  function cell(text, cls) { return MC.el('td', cls ? { class: cls, text: text } : { text: text }); }

  // Paths a page leaves out of its table (the CPU budget page's load).
  MC.hidden = [];

  // The table of every resource loaded so far, into each element with data-resources.
  MC.renderResources = function () {
    var rows = MC.entries().map(MC.describe).filter(function (d) {
      return !MC.hidden.some(function (h) { return d.path.indexOf(h) === 0; });
    });
    Array.prototype.forEach.call(document.querySelectorAll('[data-resources]'), function (box) {
      var tbody = MC.el('tbody');
      rows.forEach(function (d) {
        var saved = d.decoded > 0 && d.encoded > 0 ? Math.round(100 * (1 - d.encoded / d.decoded)) + ' %' : '';
        var tr = MC.el('tr', { 'data-path': d.path, 'data-source': d.source, 'data-coding': d.coding },
          [cell(d.path), cell(d.type), cell(d.coding), cell(MC.bytes(d.wire), 'num'),
           cell(MC.bytes(d.encoded), 'num'), cell(MC.bytes(d.decoded), 'num'), cell(saved, 'num')]);
        tr.appendChild(MC.el('td', {}, [MC.sourceBadge(d)]));
        tbody.appendChild(tr);
      });
      var table = MC.el('table', { class: 'resources' }, [
        MC.el('thead', {}, [MC.el('tr', {}, ['resource', 'type', 'coding', 'on the wire',
          'body sent', 'decoded', 'saved', 'source'].map(function (h) {
          return MC.el('th', { text: h });
        }))]), tbody]);
      box.replaceChildren(table);
    });
  };

  // fetch() that reaches the server (no-store) and comes back with its Resource Timing entry.
  MC.measure = function (url, options) {
    var abs = new URL(url, location.href).href;
    var before = performance.getEntriesByName(abs).length;
    return fetch(abs, Object.assign({ cache: 'no-store' }, options || {})).then(function (r) {
      return r.text().then(function (text) {
        return waitFor(function () {
          var all = performance.getEntriesByName(abs);
          return all.length > before ? all[all.length - 1] : null;
        }, 3000).then(function (entry) {
          var d = entry ? MC.describe(entry) : { source: 'none', detail: 'no Resource Timing entry' };
          d.status = r.status;
          d.headers = r.headers;
          d.text = text;
          d.xSource = r.headers.get('x-mc-source');
          return d;
        });
      });
    });
  };

  function waitFor(test, ms) {
    return new Promise(function (resolve) {
      var t0 = Date.now();
      (function poll() {
        var v = test();
        if (v || Date.now() - t0 > ms) { resolve(v); } else { setTimeout(poll, 30); }
      })();
    });
  }
  MC.waitFor = waitFor;

  // The module's counters from /metrics: {'name{labels}': number}.
  MC.metrics = function () {
    return fetch('/metrics', { cache: 'no-store' }).then(function (r) {
      if (!r.ok) { throw new Error('/metrics: ' + r.status); }
      return r.text();
    }).then(function (text) {
      var out = {};
      text.split('\n').forEach(function (line) {
        var m = /^(multicompress_[a-z_]+(?:\{[^}]*\})?) ([0-9.eE+-]+)$/.exec(line);
        if (m) { out[m[1]] = Number(m[2]); }
      });
      out._text = text;
      return out;
    });
  };

  // The sum of the series whose name and labels contain every string of `parts`.
  MC.sum = function (metrics, parts) {
    return Object.keys(metrics).filter(function (k) {
      return k[0] !== '_' && parts.every(function (p) { return k.indexOf(p) >= 0; });
    }).reduce(function (a, k) { return a + metrics[k]; }, 0);
  };

  function renderMenu() {
    var here = location.pathname;
    Array.prototype.forEach.call(document.querySelectorAll('nav.panels'), function (nav) {
      nav.replaceChildren.apply(nav, MC.PANELS.map(function (p) {
        var a = MC.el('a', { href: p.href, text: p.title });
        if (p.href === here) { a.setAttribute('aria-current', 'page'); }
        return a;
      }));
    });
  }

  // The line at the top of the br-only/ and gzip-only/ pages.
  function showEncoding() {
    var el = document.getElementById('encoding');
    var nav = performance.getEntriesByType('navigation')[0];
    if (!el) { return; }
    if (nav && nav.encodedBodySize && nav.decodedBodySize) {
      var d = MC.describe(nav);
      el.textContent = d.coding + ': ' + nav.encodedBodySize + ' bytes sent for ' +
        nav.decodedBodySize + ' (' + Math.round(100 * nav.encodedBodySize / nav.decodedBodySize) + '%)';
    } else {
      el.textContent = 'see the Content-Encoding response header';
    }
  }

  var pending = null;
  function rerender() {
    if (pending) { return; }
    pending = setTimeout(function () { pending = null; MC.renderResources(); }, 100);
  }

  performance.setResourceTimingBufferSize(5000);
  renderMenu();
  function ready() {
    showEncoding();
    MC.renderResources();
    if (window.PerformanceObserver) {
      new PerformanceObserver(rerender).observe({ type: 'resource', buffered: false });
    }
    document.body.setAttribute('data-ready', 'yes');
    document.dispatchEvent(new Event('mc-ready'));
  }
  // Navigation Timing has its sizes once the page has loaded.
  if (document.readyState === 'complete') { setTimeout(ready, 0); } else {
    window.addEventListener('load', function () { setTimeout(ready, 0); });
  }
})();
