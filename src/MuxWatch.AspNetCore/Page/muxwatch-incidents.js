// MuxWatch's status page, its first section, "Incidents": each endpoint's timeouts that overlapped in time, as one
// thing to look at (GET {api}/incidents): when, how many, by cause, who or what was the culprit, what to do first.
// A link can name an endpoint (?endpoint=host:port, as the MuxWatchTimeoutSpike alert carries): the page then shows
// that endpoint's incidents and opens the newest on its first timeout. Loaded after muxwatch-format.js, before
// muxwatch.js; everything it defines is on window.MuxWatchIncidents. All values are shown as text.
(() => {
  'use strict';

  const { causeColors, clock, plural, el } = window.MuxWatchFormat;
  const maxShown = 10;
  const wanted = new URLSearchParams(window.location.search).get('endpoint');
  let opened = false;

  // Draws `incidents` (the API's, newest first); `select(id)` opens a timeout's details in the page.
  function render(incidents, select) {
    const shown = incidents.filter(i => !wanted || i.endpoint === wanted).slice(0, maxShown);
    const target = wanted ? shown[0] : null;
    const items = shown.map(i => {
      const swatch = el('span', { class: 'swatch' });
      swatch.style.backgroundColor = causeColors[i.cause] || causeColors.unknown; // CSSOM, which the page's CSP allows
      const causes = Object.entries(i.byCause || {}).map(([cause, count]) => `${cause} ${count}`);
      if (i.settling) { causes.push(`${i.settling} settling`); }
      const item = el('li', { class: 'incident' + (target && i.id === target.id ? ' selected' : ''), 'data-incident-id': i.id, 'data-endpoint': i.endpoint, 'data-cause': i.cause || 'settling', tabindex: '0' },
        el('div', { class: 'head' }, swatch, el('strong', {}, i.endpoint),
          ` ${clock(new Date(i.start))} – ${i.end ? clock(new Date(i.end)) : 'now'} · ${plural(i.timeouts, 'timeout')}`,
          i.open ? el('span', { class: 'problem' }, ' · still going') : ''),
        el('div', { class: 'causes quiet' }, causes.join(', ')),
        i.firstStep ? el('div', { class: 'first-step' }, 'First: ', i.firstStep) : '',
        (i.culprits || []).length ? el('ul', { class: 'culprits' }, ...i.culprits.map(line => el('li', {}, line))) : '',
        // The fleet as the third witness (MuxWatch:FleetPrometheusUrl): what the other instances saw, and whether it agrees.
        i.fleet ? el('div', { class: 'fleet' + (i.fleet.agrees === false ? ' problem' : ''), 'data-fleet-verdict': i.fleet.verdict },
          'Fleet: ', i.fleet.text, i.fleet.weighing ? '. ' + i.fleet.weighing : '') : '');
      const open = () => { if ((i.timeoutIds || []).length) { select(i.timeoutIds[0]); } };
      item.addEventListener('click', open);
      item.addEventListener('keydown', event => { if (event.key === 'Enter') { open(); } });
      return item;
    });
    document.getElementById('incidents').replaceChildren(...(items.length ? items
      : [el('li', { class: 'quiet' }, wanted ? `no incident on ${wanted} is kept` : 'no incidents: no timeouts kept')]));
    document.getElementById('incidents-filter').textContent = wanted ? `on ${wanted} (the link's endpoint; open the page without it for all)` : '';
    if (target && !opened && (target.timeoutIds || []).length) {
      opened = true;
      select(target.timeoutIds[0]);
    }
  }

  window.MuxWatchIncidents = Object.freeze({ render });
})();
