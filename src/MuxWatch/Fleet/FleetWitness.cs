using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using MuxWatch.Configuration;
using MuxWatch.Export;
using MuxWatch.Sinks;
using MuxWatch.Sources;

namespace MuxWatch.Fleet;

/// <summary>
/// The fleet as a witness (<c>MuxWatch:FleetPrometheusUrl</c>): once an incident's last timeout is
/// <c>MuxWatch:FleetReadDelay</c> old, reads from Prometheus how many of the instances watching its endpoint were
/// affected over its span, and keeps it on the incident. Never in a request's path: the probe loop only starts a read,
/// one at a time (a read never overlaps the last), at most <see cref="MaxPerRead"/> incidents each, every query bounded
/// by <see cref="FleetQuery.Timeout"/>. A failed query counts in <c>muxwatch_probe_failures_total{probe="fleet"}</c>
/// and is tried again later, three times at most. Without the setting it does nothing.
/// </summary>
internal sealed partial class FleetWitness : IPeriodicProbe, IDisposable
{
    /// <summary>The most incidents read in one go: a flood of incidents on many endpoints costs Prometheus this many queries at most.</summary>
    internal const int MaxPerRead = 10;

    private readonly RecentIncidents _incidents;
    private readonly FleetQuery? _query;
    private readonly MuxWatchMetrics _metrics;
    private readonly TimeProvider _time;
    private readonly ILogger<FleetWitness> _logger;
    private readonly TimeSpan _delay;
    private readonly TimeSpan _every;
    private DateTimeOffset _next;
    private int _reading;

    public FleetWitness(RecentIncidents incidents, IOptions<MuxWatchOptions> options, MuxWatchMetrics metrics, TimeProvider time, ILogger<FleetWitness> logger)
    {
        var settings = options.Value;
        _incidents = incidents;
        _query = settings.FleetPrometheusUrl is { } prometheus ? new FleetQuery(prometheus) : null;
        _metrics = metrics;
        _time = time;
        _logger = logger;
        _delay = settings.FleetReadDelay;
        _every = TimeSpan.FromTicks(Math.Clamp(settings.FleetReadDelay.Ticks / 4, TimeSpan.TicksPerSecond, 15 * TimeSpan.TicksPerSecond));
    }

    public string Name => "fleet";

    /// <summary>Starts a read when one is due and none runs; returns at once.</summary>
    public void Sample(DateTimeOffset now, CancellationToken stopping)
    {
        if (_query is null || now < _next || Interlocked.CompareExchange(ref _reading, 1, 0) != 0)
        {
            return;
        }

        _next = now + _every;
        _ = Task.Run(() => ReadDueAsync(stopping), CancellationToken.None);
    }

    /// <summary>Reads the due incidents one after the other; the next read starts only when this one is over.</summary>
    internal async Task ReadDueAsync(CancellationToken stopping)
    {
        try
        {
            foreach (var due in _incidents.DueForFleet(_time.GetUtcNow(), _delay, MaxPerRead))
            {
                try
                {
                    var reading = await _query!.ReadAsync(due.Endpoint, due.Start, due.LastTimeout, _time.GetUtcNow(), stopping).ConfigureAwait(false);
                    _incidents.AddFleetReading(due.Id, due.LastTimeout, reading, _time.GetUtcNow() + _every);
                }
                catch (FleetQueryException ex)
                {
                    _metrics.CountProbeFailure(Name, ex.Reason);
                    _incidents.FleetReadFailed(due.Id, _time.GetUtcNow() + _delay);
                    LogReadFailed(_logger, due.Id, due.Endpoint, ex.Message);
                }
            }
        }
        catch (OperationCanceledException) when (stopping.IsCancellationRequested)
        {
        }
        finally
        {
            Volatile.Write(ref _reading, 0);
        }
    }

    public void Dispose() => _query?.Dispose();

    [LoggerMessage(Level = LogLevel.Warning, Message = "The fleet's figures for incident {Incident} on {Endpoint} could not be read: {Reason}")]
    private static partial void LogReadFailed(ILogger logger, long incident, string endpoint, string reason);
}
