using Microsoft.Extensions.Options;
using MuxWatch.Configuration;
using MuxWatch.Pipeline;
using MuxWatch.Sources;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// Samples every watched multiplexer each cycle, and submits the probe's own timeouts to the pipeline
/// (a source like the first-chance catcher: it only ever hands timeouts forward).
/// </summary>
internal sealed class MultiplexerProbe(WatchedMultiplexers multiplexers, TimeoutPipeline pipeline, IOptions<MuxWatchOptions> options) : IPeriodicProbe
{
    public string Name => "multiplexer";

    public void Sample(DateTimeOffset now, CancellationToken stopping)
    {
        var settings = options.Value;
        List<Exception>? failures = null;
        multiplexers.Refresh();
        foreach (var watched in multiplexers.All)
        {
            try
            {
                watched.Sample(now, settings.Ping ? settings.PingInterval : null, settings.ProbeTimeout, pipeline, stopping);
            }
#pragma warning disable CA1031 // one multiplexer that fails to sample must not keep the others from theirs
            catch (Exception ex)
#pragma warning restore CA1031
            {
                (failures ??= []).Add(ex);
            }
        }

        if (failures is not null)
        {
            throw new AggregateException("sampling a watched multiplexer failed", failures);
        }
    }
}
