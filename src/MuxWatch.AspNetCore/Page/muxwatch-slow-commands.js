// MuxWatch's status page, the section "Slowest commands": each polled endpoint's slow log of the last hour
// grouped by command and client name (GET {api}/events, slowCommands), the slowest first, so the person paged
// sees who blocked the server before reaching for redis-cli. Loaded after muxwatch-format.js, before muxwatch.js;
// everything it defines is on window.MuxWatchSlowCommands. Client names and arguments are anyone's text: shown as text.
(() => {
  'use strict';

  const { formatMs, clock, plural, el, sender } = window.MuxWatchFormat;
  const maxRows = 20;

  // Draws the groups of every endpoint in `endpoints` (the events answer's), slowest first, at most maxRows.
  function render(endpoints) {
    const groups = endpoints.flatMap(timeline => (timeline.slowCommands || []).map(group => ({ endpoint: timeline.endpoint, ...group })));
    groups.sort((a, b) => (b.slowestMs - a.slowestMs) || (Date.parse(b.lastLogged) - Date.parse(a.lastLogged)));
    const rows = groups.slice(0, maxRows).map(group =>
      el('tr', { 'data-command': group.command },
        el('td', {}, group.endpoint),
        el('td', { class: 'command' }, group.argument ? `${group.command} ${group.argument}` : group.command),
        el('td', {}, sender(group) || '—'),
        el('td', {}, plural(group.count, 'time')),
        el('td', {}, formatMs(group.slowestMs)),
        el('td', {}, formatMs(group.totalMs)),
        el('td', { title: group.lastLogged }, clock(new Date(group.lastLogged)))));
    const more = groups.length > maxRows ? [el('tr', {}, el('td', { colspan: '7', class: 'quiet' }, `${groups.length - maxRows} more groups, less slow`))] : [];
    document.querySelector('#slow-commands tbody').replaceChildren(
      ...(rows.length ? rows.concat(more) : [el('tr', {}, el('td', { colspan: '7', class: 'quiet' }, 'nothing in the slow logs of the last hour'))]));
  }

  window.MuxWatchSlowCommands = Object.freeze({ render });
})();
