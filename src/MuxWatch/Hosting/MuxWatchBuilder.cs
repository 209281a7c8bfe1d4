using System.Diagnostics.Metrics;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Hosting;
using MuxWatch.Export;
using Prometheus;

namespace MuxWatch.Hosting;

/// <summary>Returned by <c>AddMuxWatch()</c> so that further MuxWatch calls chain.</summary>
/// <param name="Services">The service collection MuxWatch was added to.</param>
public sealed record MuxWatchBuilder(IServiceCollection Services)
{
    /// <summary>
    /// Exports MuxWatch's families into <paramref name="registry"/> instead of prometheus-net's default
    /// registry (where an app that already serves prometheus-net's <c>/metrics</c> reads them).
    /// </summary>
    public MuxWatchBuilder UseMetricsRegistry(CollectorRegistry registry)
    {
        ArgumentNullException.ThrowIfNull(registry);
        Services.RemoveAll<MuxWatchMetrics>();
        Services.AddSingleton(new MuxWatchMetrics(registry));
        return this;
    }

    /// <summary>
    /// Publishes every MuxWatch family through the <see cref="System.Diagnostics.Metrics.Meter"/> named
    /// <c>MuxWatch</c> as well (<see cref="MuxWatchMeter.MeterName"/>), for OpenTelemetry:
    /// <c>AddOpenTelemetry().WithMetrics(m =&gt; m.AddMeter("MuxWatch"))</c>. The meter is created
    /// through the app's <see cref="IMeterFactory"/> (a generic host or WebApplication registers one;
    /// elsewhere call <c>services.AddMetrics()</c>) when the host starts. To report through the meter
    /// only, also call <see cref="UseMetricsRegistry"/> with a registry of MuxWatch's own
    /// (<c>Metrics.NewCustomRegistry()</c>), which nothing then serves.
    /// </summary>
    public MuxWatchBuilder PublishMeter()
    {
        Services.TryAddSingleton(sp => new MuxWatchMeter(
            sp.GetService<IMeterFactory>() ?? throw new InvalidOperationException(
                "MuxWatch's PublishMeter() needs an IMeterFactory: a generic host or WebApplication registers one; otherwise call services.AddMetrics()"),
            sp.GetRequiredService<MuxWatchMetrics>()));
        Services.TryAddEnumerable(ServiceDescriptor.Singleton<IHostedService, MeterPublication>());
        return this;
    }

    /// <summary>Creates the meter when the host starts, so its instruments exist before the first collection.</summary>
    private sealed class MeterPublication(MuxWatchMeter meter) : IHostedService
    {
        public Task StartAsync(CancellationToken cancellationToken)
        {
            GC.KeepAlive(meter);
            return Task.CompletedTask;
        }

        public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;
    }
}
