using Microsoft.Extensions.Options;
using MuxWatch.Configuration;
using MuxWatch.Pipeline;
using MuxWatch.Sources;
using MuxWatch.State;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// Samples every watched multiplexer each cycle, and submits the probe's own timeouts to the pipeline
/// (a source like the first-chance catcher: it only ever hands timeouts forward).
/// </summary>
/// <remarks>
/// While the process is quiet (<see cref="ProcessActivity"/>: an idle app), the PINGs come
/// <see cref="MuxWatchOptions.PingQuietMultiple"/> times less often: each one runs the client's whole command path,
/// and run every 10 s it is compiled three times over by the JIT's tiers in an idle app's first minutes, about a fifth
/// of what watching cost it then (docs/benchmarks.md, "The PING at the quiet pace"). The counters and the connection
/// state are still read every cycle, and an endpoint the witness finds silent is still PINGed every cycle.
/// </remarks>
internal sealed class MultiplexerProbe(WatchedMultiplexers multiplexers, TimeoutPipeline pipeline, IOptions<MuxWatchOptions> options, ProcessActivity? activity = null) : IPeriodicProbe
{
    // This cycle's multiplexers and their servers, kept between the two halves of a cycle (a probe never overlaps itself).
    private readonly List<(WatchedMultiplexer Watched, IServer[] Servers)> _cycle = [];

    public string Name => "multiplexer";

    public void Sample(DateTimeOffset now, CancellationToken stopping)
    {
        var settings = options.Value;
        List<Exception>? failures = null;
        multiplexers.Refresh();
        var quietPace = settings.PingQuietMultiple > 1 && activity?.IsQuiet(now) == true;
        var pingInterval = PingInterval(settings, quietPace);
        var statusInterval = settings.Ping ? settings.PingInterval : (TimeSpan?)null;
        _cycle.Clear();
        foreach (var watched in multiplexers.All)
        {
            try
            {
                if (watched.BeginCycle(now) is { } servers)
                {
                    _cycle.Add((watched, servers));
                }
            }
#pragma warning disable CA1031 // one multiplexer that fails to sample must not keep the others from theirs
            catch (Exception ex)
#pragma warning restore CA1031
            {
                (failures ??= []).Add(ex);
            }
        }

        // The endpoints seen for the first time get their series a family at a time before any is sampled (were this to
        // fail, each endpoint's sampling makes its own, as it always may).
        try
        {
            WatchedMultiplexer.MakeNewEndpointsSeries(_cycle);
        }
#pragma warning disable CA1031 // as above
        catch (Exception ex)
#pragma warning restore CA1031
        {
            (failures ??= []).Add(ex);
        }

        foreach (var (watched, servers) in _cycle)
        {
            try
            {
                watched.Sample(servers, now, pingInterval, statusInterval, quietPace, settings.ProbeTimeout, pipeline, stopping);
            }
#pragma warning disable CA1031 // as above
            catch (Exception ex)
#pragma warning restore CA1031
            {
                (failures ??= []).Add(ex);
            }
        }

        _cycle.Clear(); // holds no multiplexer between cycles
        if (failures is not null)
        {
            throw new AggregateException("sampling a watched multiplexer failed", failures);
        }
    }

    /// <summary>
    /// The PINGs' interval this cycle: none when PINGs are off; a whole multiple of <see cref="MuxWatchOptions.PingInterval"/>
    /// while the process is quiet, so that the slots stay on the clock-aligned ticks the calm polls share.
    /// </summary>
    internal static TimeSpan? PingInterval(MuxWatchOptions settings, bool processQuiet) =>
        !settings.Ping ? null : processQuiet ? settings.PingInterval * settings.PingQuietMultiple : settings.PingInterval;
}
