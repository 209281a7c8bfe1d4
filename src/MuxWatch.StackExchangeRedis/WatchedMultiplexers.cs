using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using MuxWatch.Configuration;
using MuxWatch.State;
using MuxWatch.Model;
using MuxWatch.Sources;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// Every watched multiplexer: those added with <c>AddMultiplexer</c>, the configured targets, and those
/// discovery finds in the process (<see cref="MultiplexerDiscovery"/>): the one list that the probe samples,
/// the live-counters step and the server poller read, and <c>/api/targets</c> reports.
/// </summary>
/// <remarks>
/// The list changes only on the probe loop's thread (<see cref="Refresh"/>, at the start of each cycle) and is
/// replaced whole, so readers on other threads (the API, the pipeline) see one consistent array. A discovered
/// multiplexer waits until every multiplexer named with <c>AddMultiplexer</c> has been resolved once, so one
/// the app also names is watched once, under the app's name.
/// </remarks>
internal sealed partial class WatchedMultiplexers : ITargetStatusSource, IAsyncDisposable, IDisposable
{
    /// <summary>How many discovered multiplexers are watched at once; more are logged once and left out (label values stay bounded).</summary>
    internal const int MaxDiscovered = 16;

    /// <summary>
    /// How long a discovered multiplexer waits before it is watched: a multiplexer the app names with
    /// <c>AddMultiplexer</c> and recreates (the reconnect pattern) is asked for again a second after the old one
    /// was disposed, and claims the new one first; MuxWatch never watches it twice meanwhile.
    /// </summary>
    internal static readonly TimeSpan DiscoveryGrace = TimeSpan.FromSeconds(1.5);

    /// <summary>How many discovered multiplexers may wait out the grace at once.</summary>
    private const int MaxPending = 256;

    private readonly IServiceProvider _services;
    private readonly MultiplexerMetrics _metrics;
    private readonly TimeProvider _time;
    private readonly int _maxEndpoints;
    private readonly ILogger _logger;
    private readonly ILogger _multiplexerLogger;
    private readonly ServerTimelines? _timelines;
    private readonly ConcurrentQueue<DiscoveredMultiplexer> _discovered = new();
    private readonly List<(DiscoveredMultiplexer Discovered, DateTimeOffset Seen)> _pending = [];
    private readonly IDisposable? _listening;
    private volatile WatchedMultiplexer[] _all;
    private bool _overBudgetLogged;

    public WatchedMultiplexers(
        IEnumerable<MultiplexerRegistration> registrations,
        IEnumerable<ConfiguredTargets> configured,
        IServiceProvider services,
        MultiplexerMetrics metrics,
        TimeProvider time,
        IOptions<MuxWatchOptions> options,
        ILogger<WatchedMultiplexers> logger,
        ILoggerFactory loggers,
        ServerTimelines? timelines = null)
    {
        var all = registrations.Concat(configured.SelectMany(targets => targets.Registrations())).ToList();
        var duplicate = all.GroupBy(r => r.Name, StringComparer.OrdinalIgnoreCase).FirstOrDefault(g => g.Count() > 1);
        if (duplicate is not null)
        {
            throw new OptionsValidationException(nameof(MuxWatchOptions), typeof(MuxWatchOptions),
                [$"Two multiplexers are named '{duplicate.Key}' (AddMultiplexer and {ConfiguredTargets.SectionName}): names must be unique."]);
        }

        _services = services;
        _metrics = metrics;
        _time = time;
        _maxEndpoints = options.Value.MaxEndpointsPerMultiplexer;
        _logger = logger;
        _multiplexerLogger = loggers.CreateLogger(typeof(WatchedMultiplexer).FullName!);
        _timelines = timelines;
        _all = [.. all.Select(New)];
        if (options.Value.DiscoverMultiplexers)
        {
            _listening = MultiplexerDiscovery.Listen(_discovered.Enqueue);
        }
    }

    /// <summary>Every watched multiplexer: the named ones in registration order, then the discovered ones.</summary>
    public IReadOnlyList<WatchedMultiplexer> All => _all;

    /// <summary>True when every multiplexer the process made is watched: discovery is on and none was left out over its budget.</summary>
    public bool WatchesEveryMultiplexer => _listening is not null && !_overBudgetLogged;

    public IReadOnlyList<TargetStatus> Targets() => [.. _all.Select(w => w.Status())];

    /// <summary>
    /// Takes in the multiplexers discovered since the last cycle and lets go of the discovered ones that are
    /// gone or that the app also named. Called by the probe loop only.
    /// </summary>
    public void Refresh()
    {
        var all = _all;
        List<WatchedMultiplexer>? changed = null;
        foreach (var watched in all)
        {
            if (watched.Discovered && (watched.Gone || NamedTwin(all, watched) is not null))
            {
                changed ??= [.. all];
                changed.Remove(watched);
                watched.LetGo();
            }
        }

        var now = _time.GetUtcNow();
        while (_discovered.TryDequeue(out var heard))
        {
            _pending.Add((heard, now));
        }

        if (_pending.Count > MaxPending)
        {
            // An app connecting faster than the grace lets them in (one per request): the newest are kept.
            _pending.RemoveRange(0, _pending.Count - MaxPending);
        }

        // Each waits out the grace, and the named ones' first resolution: a discovered twin is recognised only then.
        if (_pending.Count > 0 && all.All(w => w.Discovered || w.Owned || w.Settled))
        {
            foreach (var (discovered, seen) in _pending.ToList())
            {
                if (now - seen < DiscoveryGrace)
                {
                    continue;
                }

                _pending.RemoveAll(p => ReferenceEquals(p.Discovered, discovered));
                var current = changed ?? [.. all];
                if (discovered.Live is not { } multiplexer || current.Any(w => ReferenceEquals(w.Multiplexer, multiplexer) || w.Holds(discovered)))
                {
                    continue;
                }

                if (current.Count(w => w.Discovered) >= MaxDiscovered)
                {
                    if (!_overBudgetLogged)
                    {
                        _overBudgetLogged = true;
                        LogTooMany(_logger, MaxDiscovered, discovered.Origin.MadeBy ?? discovered.Origin.Label);
                    }

                    continue;
                }

                current.Add(New(MultiplexerRegistration.ForDiscovered(FreeName(current, discovered.Origin, multiplexer), discovered)));
                if (_logger.IsEnabled(LogLevel.Information))
                {
                    var endpoints = MultiplexerInspection.EndpointsOf(multiplexer);
                    LogDiscovered(_logger, current[^1].Name, discovered.Origin.MadeBy ?? "unknown code", endpoints);
                }

                changed = current;
            }
        }

        if (changed is not null)
        {
            _all = [.. changed];
        }
    }

    /// <summary>
    /// For a container disposed synchronously (a plain <c>ServiceProvider</c> in a using block): since discovery,
    /// <c>AddMuxWatch()</c> alone registers this, and such a container refuses an async-only service. A host
    /// disposes asynchronously and never comes here.
    /// </summary>
    public void Dispose() => DisposeAsync().AsTask().GetAwaiter().GetResult();

    public async ValueTask DisposeAsync()
    {
        _listening?.Dispose();
        foreach (var watched in _all)
        {
            await watched.DisposeAsync().ConfigureAwait(false);
        }
    }

    private WatchedMultiplexer New(MultiplexerRegistration registration) =>
        new(registration, _services, _metrics, _timelines, _time, _multiplexerLogger, _maxEndpoints);

    /// <summary>A multiplexer named with <c>AddMultiplexer</c> that is the same instance as the discovered <paramref name="watched"/>.</summary>
    private static WatchedMultiplexer? NamedTwin(WatchedMultiplexer[] all, WatchedMultiplexer watched) =>
        watched.Multiplexer is { } multiplexer
            ? all.FirstOrDefault(w => !w.Discovered && ReferenceEquals(w.Multiplexer, multiplexer))
            : null;

    /// <summary>
    /// The name a discovered multiplexer is watched under: what made it (<c>distributed-cache</c>, <c>signalr</c>,
    /// ...; for the app's own, its client name when it set one), numbered from 2 when taken. Numbers are reused
    /// once their multiplexer is gone, so an app that makes many keeps a bounded set of label values.
    /// </summary>
    private static string FreeName(List<WatchedMultiplexer> current, MultiplexerOrigin origin, IConnectionMultiplexer multiplexer)
    {
        var stem = origin.Label;
        if (origin.Label is "app" or "redis" && ConfiguredClientName(multiplexer) is { } clientName)
        {
            stem = clientName;
        }

        for (var n = 1; ; n++)
        {
            var name = n == 1 ? stem : $"{stem}-{n}";
            if (!current.Any(w => string.Equals(w.Name, name, StringComparison.OrdinalIgnoreCase)))
            {
                return name;
            }
        }
    }

    /// <summary>The client name the app set in the configuration (not the client's default, the machine's name), as a label value.</summary>
    private static string? ConfiguredClientName(IConnectionMultiplexer multiplexer)
    {
        string? name;
        try
        {
            name = ConfigurationOptions.Parse(multiplexer.Configuration).ClientName;
        }
        catch (ArgumentException)
        {
            return null;
        }

        if (string.IsNullOrWhiteSpace(name))
        {
            return null;
        }

        var label = new string([.. name.Trim().Select(c => char.IsAsciiLetterOrDigit(c) || c is '.' or '_' or '-' ? c : '-')]);
        return label.Length > 48 ? label[..48] : label;
    }

    [LoggerMessage(EventId = 45, Level = LogLevel.Information,
        Message = "Watching multiplexer {Multiplexer}, discovered in the process (made by {MadeBy}; {Endpoints})")]
    private static partial void LogDiscovered(ILogger logger, string multiplexer, string madeBy, string endpoints);

    [LoggerMessage(EventId = 46, Level = LogLevel.Warning,
        Message = "The process has more than {Budget} multiplexers connected at once; the next ones (the first made by {MadeBy}) are not watched. An app that connects a multiplexer per request or per call should share one (docs/libraries.md)")]
    private static partial void LogTooMany(ILogger logger, int budget, string madeBy);
}
