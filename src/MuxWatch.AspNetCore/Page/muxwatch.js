// MuxWatch's status page: reads the JSON API (targets, timeouts, events) and draws it. No framework
// and no build step: the page must work where the library is served, offline, from the assembly.
// Every value from the API is put in the page as text (textContent, SVG attributes), never as HTML:
// a posted timeout message is anyone's text.
(() => {
  'use strict';

  const api = document.documentElement.dataset.api || '';
  const refreshEvery = 5000;
  const hour = 3600 * 1000;
  const maxTimelines = 40;
  const maxTimeoutRows = 100;
  const tokenKey = 'muxwatch-token';
  // The page's vocabulary and its small, stateless helpers: muxwatch-format.js, loaded first.
  const { causeColors, eventLabels, intervalKinds, gridStep, plural, shorten, formatMs, clock, ago, el, svgEl, eventDetail, eventTip } = window.MuxWatchFormat;

  let token = sessionStorage.getItem(tokenKey) || '';
  let selectedId = null;
  let data = { targets: [], timeouts: [], endpoints: [], incidents: [], poolStacks: undefined };
  const linkedEndpoint = new URLSearchParams(window.location.search).get('endpoint');
  let timer = null;
  let windowMs = hour; // the timelines' span: the last hour unless zoomed in

  class NeedsToken extends Error {}

  // ---- reading the API ----

  async function get(path) {
    const headers = { Accept: 'application/json' };
    if (token) {
      headers.Authorization = 'Bearer ' + token;
    }

    const response = await fetch(api + path, { headers, cache: 'no-store' });
    if (response.status === 401) {
      throw new NeedsToken(token ? 'The API refused the token given: enter the right one.' : "This MuxWatch's API needs a bearer token.");
    }

    if (!response.ok) {
      let detail = '';
      try { detail = (await response.json()).detail || ''; } catch { /* not problem details */ }
      throw new Error(`${api}${path} answered ${response.status}${detail ? ': ' + detail : ''}`);
    }

    return response.json();
  }

  async function refresh() {
    clearTimeout(timer);
    try {
      const [targets, timeouts, events, incidents, status] = await Promise.all([
        get('/targets'),
        get('/timeouts?limit=1000'),
        get('/events?limit=1000'),
        // The link's endpoint (?endpoint=, the alert's page_url) asked of the API itself: filtered here from the 50
        // newest of all endpoints, its incident was lost once 50 newer ones came from elsewhere.
        get('/incidents?limit=50' + (linkedEndpoint ? '&endpoint=' + encodeURIComponent(linkedEndpoint) : '')),
        get('/status'),
      ]);
      data = { targets: targets.targets || [], timeouts: timeouts.timeouts || [], endpoints: events.endpoints || [], incidents: incidents.incidents || [], poolStacks: status.poolStacks };
      hideTokenForm();
      render();
      setState(`updated ${clock(new Date())}`, false);
    } catch (error) {
      if (error instanceof NeedsToken) {
        showTokenForm(error.message);
        setState('waiting for a token', true);
        return; // no refresh loop until a token is given
      }

      setState(`could not refresh: ${error.message}`, true);
    }

    schedule();
  }

  function schedule() {
    clearTimeout(timer);
    if (document.getElementById('auto-refresh').checked && !document.hidden) {
      timer = setTimeout(refresh, refreshEvery);
    }
  }

  // ---- drawing ----

  function render() {
    const now = Date.now();
    window.MuxWatchIncidents.render(data.incidents, select); // first: the page opens on the incident a link names
    renderSummary(now);
    renderTargets(now);
    renderTimelines(now);
    window.MuxWatchSlowCommands.render(data.endpoints);
    window.MuxWatchPool.render(data.poolStacks);
    renderTimeouts();
    renderDetails();
  }

  function renderSummary(now) {
    const counts = new Map();
    for (const t of data.timeouts) {
      if (now - Date.parse(t.time) <= hour) {
        counts.set(t.cause, (counts.get(t.cause) || 0) + 1);
      }
    }

    const list = document.getElementById('summary');
    const items = [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([cause, count]) =>
      el('li', { class: 'chip', 'data-cause': cause }, swatch(cause), `${cause} `, el('strong', {}, String(count))));
    list.replaceChildren(...(items.length ? items : [el('li', { class: 'quiet' }, 'no timeouts in the last hour')]));
  }

  function renderTargets(now) {
    const rows = [];
    for (const target of data.targets) {
      const servers = target.servers && target.servers.length ? target.servers : [null];
      servers.forEach((server, i) => {
        const error = (server && server.polling && server.polling.lastPollError) || (i === 0 ? target.lastError : null);
        rows.push(el('tr', { 'data-target': target.name, 'data-state': target.state },
          el('td', {}, i === 0 ? target.name : ''),
          el('td', { class: 'state ' + target.state }, i === 0 ? target.state : ''),
          el('td', {}, server ? server.endpoint + (server.connected ? '' : ' (down)') : '—'),
          el('td', {}, server && server.role ? server.role : ''),
          el('td', {}, ago((server && server.lastProbeSuccess) || target.lastProbeSuccess, now)),
          el('td', error ? { class: 'problem', title: error } : { class: 'quiet' }, error ? shorten(error, 160) : 'none')));
      });
    }

    document.querySelector('#targets tbody').replaceChildren(...(rows.length ? rows : [el('tr', {}, el('td', { colspan: '6', class: 'quiet' }, 'nothing is watched yet'))]));
  }

  function renderTimelines(now) {
    const from = now - windowMs;
    const byEndpoint = new Map();
    const entry = endpoint => {
      if (!byEndpoint.has(endpoint)) {
        byEndpoint.set(endpoint, { endpoint, events: [], timeouts: [], polling: null });
      }

      return byEndpoint.get(endpoint);
    };

    for (const target of data.targets) {
      for (const server of target.servers || []) {
        entry(server.endpoint);
      }
    }

    for (const timeline of data.endpoints) {
      const row = entry(timeline.endpoint);
      row.polling = timeline.polling;
      row.events = (timeline.events || []).filter(e => (e.end ? Date.parse(e.end) : now) >= from);
    }

    for (const t of data.timeouts) {
      if (t.endpoint && Date.parse(t.time) >= from) {
        entry(t.endpoint).timeouts.push(t);
      }
    }

    const rows = [...byEndpoint.values()].sort((a, b) =>
      (b.timeouts.length - a.timeouts.length) || (b.events.length - a.events.length) || a.endpoint.localeCompare(b.endpoint));
    const container = document.getElementById('timelines');
    const width = Math.max(300, (container.clientWidth || 900) - 190);
    const shown = rows.slice(0, maxTimelines).map(row => timelineRow(row, from, now, width, now));
    if (rows.length > maxTimelines) {
      shown.push(el('p', { class: 'quiet' }, `${rows.length - maxTimelines} more endpoints, with less in the last hour, not drawn`));
    }

    container.replaceChildren(...(shown.length ? shown : [el('p', { class: 'quiet' }, 'no endpoint is polled yet')]));
    document.getElementById('legend').replaceChildren(
      ...['bgsave', 'aof-rewrite', 'loading'].map(kind => el('span', { class: 'key ' + kind }, eventLabels[kind])),
      el('span', { class: 'key fork' }, 'fork'),
      el('span', { class: 'key slow-command' }, 'slow command'),
      el('span', { class: 'key restart' }, 'restart'),
      el('span', { class: 'key role-change' }, 'role change (failover)'),
      el('span', { class: 'key replication-link-down' }, 'replica link down'),
      el('span', { class: 'key full-sync' }, 'full resync'),
      el('span', { class: 'key silence' }, eventLabels['silence']),
      el('span', { class: 'key unreachable' }, eventLabels['unreachable']),
      el('span', { class: 'key timeout' }, 'timeout (its wait drawn as a line; colour = cause)'));
  }

  // One endpoint's lane from `from` to `to` (ms since the epoch); `now` ends the events still running.
  function timelineRow(row, from, to, width, now) {
    const height = 40;
    const x = t => Math.max(0, Math.min(width, ((t - from) / (to - from)) * width));
    const svg = svgEl('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': `timeline of ${row.endpoint}` });
    svg.append(svgEl('rect', { x: 0, y: 0, width, height, class: 'lane' }));
    const step = gridStep(to - from);
    for (let t = Math.ceil(from / step) * step; t < to; t += step) {
      svg.append(svgEl('line', { x1: x(t), x2: x(t), y1: 0, y2: height, class: 'grid' }));
    }

    for (const e of row.events) {
      const start = Date.parse(e.start);
      const end = e.end ? Date.parse(e.end) : now;
      if (end < from || start > to) {
        continue;
      }

      const tip = eventTip(e);
      let shape;
      if (intervalKinds.has(e.kind)) {
        shape = svgEl('rect', { x: x(start), y: 4, width: Math.max(2, x(end) - x(start)), height: 12, class: 'event ' + e.kind });
      } else if (e.kind === 'fork' && e.betweenPolls) {
        // Seen only by its count between two polls: when in that window is unknown, so the window is drawn, thin.
        shape = svgEl('rect', { x: x(start), y: 0, width: Math.max(3, x(end) - x(start)), height: 3, class: 'event fork between' });
      } else if (e.kind === 'fork') {
        const forkEnd = e.durationMs != null ? start + e.durationMs : end;
        shape = svgEl('rect', { x: x(start) - 1, y: 2, width: Math.max(3, x(forkEnd) - x(start)), height: 16, class: 'event fork' });
      } else if (e.kind === 'slow-command') {
        // A diamond where it began, a bar as long as it ran (the server did nothing else meanwhile).
        const cx = x(start);
        const ran = e.durationMs != null ? Math.max(0, x(start + e.durationMs) - cx) : 0;
        shape = svgEl('g', { class: 'event slow-command' });
        shape.append(svgEl('rect', { x: cx, y: 22, width: ran, height: 2 }), svgEl('path', { d: `M${cx} 19 l4 4 l-4 4 l-4 -4 z` }));
      } else {
        const rx = x(start);
        shape = svgEl('line', { x1: rx, x2: rx, y1: 0, y2: height, class: 'event ' + e.kind });
      }

      shape.setAttribute('data-kind', e.kind);
      shape.append(svgEl('title', {}, tip));
      svg.append(shape);
    }

    for (const t of row.timeouts) {
      if (Date.parse(t.time) < from || (t.waitingSince ? Date.parse(t.waitingSince) : Date.parse(t.time)) > to) {
        continue;
      }

      const end = x(Date.parse(t.time));
      const start = t.waitingSince ? x(Date.parse(t.waitingSince)) : end;
      const color = causeColors[t.cause] || causeColors.unknown;
      const group = svgEl('g', { class: 'timeout' + (t.id === selectedId ? ' selected' : ''), 'data-timeout-id': t.id, 'data-cause': t.cause, tabindex: '0' });
      group.append(
        svgEl('line', { x1: start, x2: end, y1: 33, y2: 33, stroke: color, class: 'wait' }),
        svgEl('circle', { cx: end, cy: 33, r: 4, fill: color }),
        svgEl('title', {}, `${clock(new Date(t.time))} ${t.command || ''} timed out: ${t.cause} (${t.confidence})`));
      group.addEventListener('click', () => select(t.id));
      group.addEventListener('keydown', event => { if (event.key === 'Enter') { select(t.id); } });
      svg.append(group);
    }

    const pollError = row.polling && row.polling.lastPollError;
    return el('div', { class: 'timeline', 'data-endpoint': row.endpoint },
      el('div', { class: 'label' },
        el('strong', {}, row.endpoint),
        el('span', { class: 'quiet' }, `${plural(row.timeouts.length, 'timeout')}, ${plural(row.events.length, 'event')}`),
        pollError ? el('span', { class: 'problem', title: pollError }, 'poll: ' + shorten(pollError, 90)) : ''),
      svg);
  }

  function renderTimeouts() {
    const rows = data.timeouts.slice(0, maxTimeoutRows).map(t => {
      const row = el('tr', { 'data-timeout-id': t.id, 'data-cause': t.cause, class: t.id === selectedId ? 'selected' : '', tabindex: '0' },
        el('td', { title: t.time }, clock(new Date(t.time))),
        el('td', {}, t.endpoint || '—'),
        el('td', {}, t.command || '—'),
        el('td', { class: 'cause' }, swatch(t.cause), t.cause, el('span', { class: 'quiet' }, ` ${t.confidence}${t.settled ? '' : ', settling'}`)),
        el('td', { class: 'why' }, whyLine(t)),
        el('td', {}, el('a', { href: `${api}/timeouts/${t.id}`, target: '_blank', rel: 'noopener', title: 'the full JSON (with a token, open it from the details instead)' }, 'JSON')));
      row.addEventListener('click', event => { if (event.target.tagName !== 'A') { select(t.id); } });
      row.addEventListener('keydown', event => { if (event.key === 'Enter') { select(t.id); } });
      return row;
    });
    const more = data.timeouts.length > maxTimeoutRows ? [el('tr', {}, el('td', { colspan: '6', class: 'quiet' }, `${data.timeouts.length - maxTimeoutRows} older kept; ${api}/timeouts?before=… pages through them`))] : [];
    document.querySelector('#timeouts tbody').replaceChildren(...(rows.length ? rows.concat(more) : [el('tr', {}, el('td', { colspan: '6', class: 'quiet' }, 'no timeouts recorded'))]));
  }

  function renderDetails() {
    const panel = document.getElementById('details');
    const t = data.timeouts.find(candidate => candidate.id === selectedId);
    if (!t) {
      panel.hidden = true;
      panel.replaceChildren();
      return;
    }

    const waitStart = t.waitingSince ? Date.parse(t.waitingSince) : Date.parse(t.time);
    const waitEnd = Date.parse(t.time);
    const timeline = data.endpoints.find(e => e.endpoint === t.endpoint);
    const during = timeline ? (timeline.events || []).filter(e => Date.parse(e.start) <= waitEnd && (e.end ? Date.parse(e.end) : Date.now()) >= waitStart) : [];
    const close = el('button', { type: 'button', class: 'close', 'aria-label': 'close the details' }, '×');
    close.addEventListener('click', () => select(null));
    const raw = el('pre', { class: 'json' }, JSON.stringify(t, null, 2));

    // The wait itself, zoomed: from a little before it began to a little after it ended.
    const margin = Math.max(2000, (waitEnd - waitStart) / 2);
    const zoomFrom = waitStart - margin;
    const zoomTo = waitEnd + margin;
    const zoomed = timelineRow({
      endpoint: t.endpoint || 'unknown endpoint',
      events: timeline ? timeline.events || [] : [],
      timeouts: data.timeouts.filter(o => o.endpoint === t.endpoint),
      polling: null,
    }, zoomFrom, zoomTo, Math.max(300, panel.clientWidth ? panel.clientWidth - 240 : 900), Date.now());
    zoomed.classList.add('zoomed');

    panel.replaceChildren(
      close,
      el('h2', {}, `Timeout #${t.id}: `, swatch(t.cause), t.cause),
      el('dl', {},
        ...pair('When', `${t.time} (waited ${t.waitingSince ? ((waitEnd - waitStart) / 1000).toFixed(1) + ' s, since ' + clock(new Date(waitStart)) : 'an unknown time'})`),
        ...pair('Where', `${t.endpoint || 'unknown endpoint'}${t.multiplexer ? ', multiplexer ' + t.multiplexer : ''}, seen by ${t.source}`),
        ...pair('Command', `${t.command || '—'}${t.key ? ' ' + t.key : ''}${t.timeoutMs ? ' (timeout ' + t.timeoutMs + ' ms)' : ''}`),
        ...pair('Cause', `${t.cause}, confidence ${t.confidence}${t.settled ? '' : ' (settling: the server timeline is still being read)'}${t.causes && t.causes.length > 1 ? '; also ' + t.causes.filter(c => c !== t.cause).join(', ') : ''}`)),
      el('h3', {}, 'Evidence'),
      el('ul', { class: 'evidence' }, ...(t.evidence || []).map(line => el('li', { class: line.startsWith('why: ') ? 'why' : '' }, line))),
      el('h3', {}, 'Advice'),
      el('p', {}, t.advice || '—'),
      el('h3', {}, `Its endpoint from ${clock(new Date(zoomFrom))} to ${clock(new Date(zoomTo))}`),
      zoomed,
      el('h3', {}, 'Server events in its waiting window'),
      during.length
        ? el('table', { class: 'events' },
          el('thead', {}, el('tr', {}, el('th', {}, 'Event'), el('th', {}, 'Start'), el('th', {}, 'Duration'), el('th', {}, 'Detail'))),
          el('tbody', {}, ...during.map(e => el('tr', { 'data-kind': e.kind },
            el('td', {}, eventLabels[e.kind] || e.kind),
            el('td', {}, clock(new Date(e.start))),
            el('td', {}, e.durationMs != null ? formatMs(e.durationMs) : (e.inProgress ? 'running' : '—')),
            el('td', {}, eventDetail(e))))))
        : el('p', { class: 'quiet' }, timeline ? `none seen on ${t.endpoint} (its timeline is complete through ${timeline.completeThrough ? clock(new Date(timeline.completeThrough)) : 'no poll yet'})` : `${t.endpoint || 'this endpoint'} is not polled here`),
      el('h3', {}, 'Full JSON ', el('a', { href: `${api}/timeouts/${t.id}`, target: '_blank', rel: 'noopener' }, `${api}/timeouts/${t.id}`)),
      raw);
    panel.hidden = false;
  }

  function select(id) {
    selectedId = id;
    render();
    if (id !== null) {
      document.getElementById('details').scrollIntoView({ block: 'nearest' });
    }
  }

  // ---- small helpers ----

  function whyLine(t) {
    const evidence = t.evidence || [];
    const why = evidence.find(line => line.startsWith('why: '));
    return why || evidence.find(line => line.startsWith(t.cause + ': ')) || evidence[0] || '';
  }

  function pair(term, value) {
    return [el('dt', {}, term), el('dd', {}, value)];
  }

  function swatch(cause) {
    const node = el('span', { class: 'swatch' });
    node.style.backgroundColor = causeColors[cause] || causeColors.unknown; // CSSOM, which the page's CSP allows (a style attribute it refuses)
    return node;
  }

  function setState(text, problem) {
    const state = document.getElementById('refresh-state');
    state.textContent = text;
    state.className = problem ? 'problem' : 'quiet';
  }

  function showTokenForm(reason) {
    const form = document.getElementById('token-form');
    document.getElementById('token-reason').textContent = reason;
    form.hidden = false;
    document.getElementById('token').focus();
  }

  function hideTokenForm() {
    document.getElementById('token-form').hidden = true;
  }

  // ---- wiring ----

  document.getElementById('token-form').addEventListener('submit', event => {
    event.preventDefault();
    token = document.getElementById('token').value.trim();
    sessionStorage.setItem(tokenKey, token);
    document.getElementById('token').value = '';
    refresh();
  });
  for (const button of document.querySelectorAll('#span button')) {
    button.addEventListener('click', () => {
      windowMs = Number(button.dataset.minutes) * 60 * 1000;
      for (const other of document.querySelectorAll('#span button')) {
        other.setAttribute('aria-pressed', String(other === button));
      }

      renderTimelines(Date.now());
    });
  }

  document.getElementById('auto-refresh').addEventListener('change', () => { if (document.getElementById('auto-refresh').checked) { refresh(); } else { clearTimeout(timer); } });
  document.addEventListener('visibilitychange', () => { if (!document.hidden) { refresh(); } });
  document.addEventListener('keydown', event => { if (event.key === 'Escape') { select(null); } });
  window.addEventListener('resize', () => renderTimelines(Date.now()));
  refresh();
})();
