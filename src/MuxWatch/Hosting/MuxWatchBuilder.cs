using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using MuxWatch.Export;
using Prometheus;

namespace MuxWatch.Hosting;

/// <summary>Returned by <c>AddMuxWatch()</c> so that further MuxWatch calls chain.</summary>
/// <param name="Services">The service collection MuxWatch was added to.</param>
public sealed record MuxWatchBuilder(IServiceCollection Services)
{
    /// <summary>
    /// Exports MuxWatch's families into <paramref name="registry"/> instead of prometheus-net's default
    /// registry (where an app that already serves prometheus-net's <c>/metrics</c> reads them). To report
    /// through the <c>MuxWatch</c> meter only (OpenTelemetry), pass a registry of MuxWatch's own
    /// (<c>Metrics.NewCustomRegistry()</c>), which nothing then serves.
    /// </summary>
    public MuxWatchBuilder UseMetricsRegistry(CollectorRegistry registry)
    {
        ArgumentNullException.ThrowIfNull(registry);
        Services.RemoveAll<MuxWatchMetrics>();
        Services.AddSingleton(new MuxWatchMetrics(registry));
        return this;
    }
}
