// MuxWatch's status page, its vocabulary and small stateless helpers (muxwatch.js draws with them).
// Loaded before muxwatch.js; everything it defines is on window.MuxWatchFormat, nothing else is global.
// Values are always put in the page as text (textContent, attributes), never as HTML.
(() => {
  'use strict';

  const svgNs = 'http://www.w3.org/2000/svg';

  const causeColors = {
    'thread-pool-starvation': '#d97706',
    'client-input-backlog': '#7c3aed',
    'large-payload': '#0891b2',
    'write-backlog': '#9333ea',
    'server-stall': '#dc2626',
    'connection-loss': '#475569',
    'slow-command': '#e11d48',
    'persistence': '#2563eb',
    'client-cpu': '#ca8a04',
    'failover': '#0f766e',
    'gc-pause': '#be185d',
    'client-defect': '#9a3412',
    'unknown': '#6b7280',
  };
  const eventLabels = {
    'bgsave': 'BGSAVE',
    'aof-rewrite': 'AOF rewrite',
    'module-fork': 'module fork',
    'loading': 'loading',
    'fork': 'fork',
    'slow-command': 'slow command',
    'restart': 'restart',
    'role-change': 'role change',
    'replication-link-down': 'replication link down',
    'full-sync': 'full resync',
    'cluster-fail': 'cluster down',
    'silence': 'no answer to MuxWatch',
    'unreachable': 'unreachable from MuxWatch',
  };
  const intervalKinds = new Set(['bgsave', 'aof-rewrite', 'module-fork', 'loading', 'replication-link-down', 'full-sync', 'cluster-fail', 'silence', 'unreachable']);

  function gridStep(span) {
    const minute = 60 * 1000;
    return span > 30 * minute ? 10 * minute : span > 10 * minute ? 5 * minute : span > 2 * minute ? minute : span > 30000 ? 10000 : 1000;
  }

  function plural(count, noun) {
    return `${count} ${noun}${count === 1 ? '' : 's'}`;
  }

  function shorten(text, length) {
    return text.length <= length ? text : text.slice(0, length - 1) + '…';
  }

  function formatMs(ms) {
    return ms >= 1000 ? (ms / 1000).toFixed(2) + ' s' : ms.toFixed(ms < 10 ? 2 : 0) + ' ms';
  }

  function clock(date) {
    return date.toLocaleTimeString([], { hour12: false });
  }

  function ago(iso, now) {
    if (!iso) { return 'never'; }
    const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
    return seconds < 120 ? `${seconds} s ago` : `${Math.round(seconds / 60)} min ago`;
  }

  // Who sent a slow command, as the slow log recorded it: "127.0.0.1:52110 (nightly-export)"; '' when it recorded no one.
  function sender(e) {
    if (!e.clientAddress && !e.clientName) { return ''; }
    return `${e.clientAddress || 'an unknown address'} (${e.clientName || 'no client name'}${e.sentBy ? ': ' + e.sentBy : ''})`;
  }

  // What an event was beyond its kind: a slow command with its first argument and sender, a save's outcome.
  function eventDetail(e) {
    const who = sender(e);
    return [e.command && (e.argument ? `${e.command} ${e.argument}` : e.command), who ? 'sent by ' + who : '', e.outcome, e.betweenPolls ? 'between polls' : '']
      .filter(Boolean).join(', ');
  }

  // A server event in one line, for its shape's tooltip: what, when, how long, and what it was.
  function eventTip(e) {
    const parts = [eventLabels[e.kind] || e.kind, clock(new Date(e.start))];
    if (e.durationMs != null) { parts.push(formatMs(e.durationMs)); }
    if (e.inProgress) { parts.push('running'); }
    const detail = eventDetail(e);
    if (detail) { parts.push(detail); }
    return parts.join(' · ');
  }

  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) {
      node.setAttribute(name, String(value));
    }

    for (const child of children) {
      if (child !== '' && child !== null && child !== undefined) {
        node.append(child instanceof Node ? child : document.createTextNode(String(child)));
      }
    }

    return node;
  }

  function svgEl(tag, attributes, text) {
    const node = document.createElementNS(svgNs, tag);
    for (const [name, value] of Object.entries(attributes)) {
      node.setAttribute(name, String(value));
    }

    if (text !== undefined) {
      node.textContent = text;
    }

    return node;
  }

  window.MuxWatchFormat = Object.freeze({ causeColors, eventLabels, intervalKinds, gridStep, plural, shorten, formatMs, clock, ago, el, svgEl, sender, eventDetail, eventTip });
})();
