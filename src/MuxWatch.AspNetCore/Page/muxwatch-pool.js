// MuxWatch's status page, the section "Thread pool": where the starved pool's workers were when MuxWatch captured
// their stacks (GET {api}/status, poolStacks): the app's methods, blocked (and through what) or busy, with counts,
// newest capture first. Hidden until a capture exists (a sidecar's own pool seldom starves). Loaded after
// muxwatch-format.js, before muxwatch.js; everything it defines is on window.MuxWatchPool. Method names are shown as text.
(() => {
  'use strict';

  const { formatMs, clock, plural, el } = window.MuxWatchFormat;

  // Draws `poolStacks` (the status answer's, or undefined where the host has none).
  function render(poolStacks) {
    const section = document.getElementById('pool-section');
    const captures = (poolStacks && poolStacks.captures) || [];
    section.hidden = captures.length === 0;
    if (section.hidden) {
      return;
    }

    const rows = captures.flatMap(capture => {
      const head = el('tr', { class: 'capture' },
        el('td', { title: capture.at }, clock(new Date(capture.at))),
        el('td', { colspan: '3' },
          `${plural(capture.workers, 'worker')}: ${capture.blockedWorkers} blocked, ${capture.busyWorkers} busy (asked by ${capture.trigger}, captured in ${formatMs(capture.tookMs)})`));
      const sites = (capture.sites.length ? capture.sites : [null]).map(site => site
        ? el('tr', { 'data-blocked': String(site.blocked) },
            el('td', {}, ''),
            el('td', { class: 'command' }, site.method),
            el('td', {}, site.blocked ? `blocked via ${site.blockedVia}` : 'busy'),
            el('td', {}, plural(site.threads, 'thread')))
        : el('tr', {}, el('td', {}, ''), el('td', { colspan: '3', class: 'quiet' }, "no frame of the app's code on the pool's workers")));
      return [head, ...sites];
    });
    document.querySelector('#pool tbody').replaceChildren(...rows);
  }

  window.MuxWatchPool = Object.freeze({ render });
})();
