using Microsoft.Extensions.Diagnostics.HealthChecks;
using MuxWatch.Hosting;
using MuxWatch.Sinks;
using MuxWatch.Sources;

#pragma warning disable IDE0130 // found where IHealthChecksBuilder's other extensions are
namespace Microsoft.Extensions.DependencyInjection;
#pragma warning restore IDE0130

/// <summary>Adds MuxWatch's health check to <c>AddHealthChecks()</c>.</summary>
public static class MuxWatchHealthChecksBuilderExtensions
{
    /// <summary>
    /// Reports what MuxWatch knows of every multiplexer it watches: a disconnected or failed one, or a stalled
    /// probe loop, is <paramref name="failureStatus"/> (default <see cref="HealthStatus.Unhealthy"/>); one still
    /// connecting, or one whose timeouts reached <see cref="MuxWatchHealthCheckOptions.TimeoutThreshold"/> within
    /// <see cref="MuxWatchHealthCheckOptions.TimeoutWindow"/>, is degraded. Each multiplexer's state and recent
    /// timeouts are in the result's data. Needs <c>AddMuxWatch()</c>.
    /// </summary>
    /// <param name="builder">The health checks builder.</param>
    /// <param name="name">The check's name (default <c>muxwatch</c>).</param>
    /// <param name="failureStatus">The status of a disconnected multiplexer or a stalled loop (default Unhealthy).</param>
    /// <param name="tags">Tags to select the check by (<c>MapHealthChecks(..., new() { Predicate = ... })</c>).</param>
    /// <param name="configure">Thresholds and statuses (<see cref="MuxWatchHealthCheckOptions"/>).</param>
    public static IHealthChecksBuilder AddMuxWatch(
        this IHealthChecksBuilder builder,
        string name = "muxwatch",
        HealthStatus? failureStatus = null,
        IEnumerable<string>? tags = null,
        Action<MuxWatchHealthCheckOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(builder);
        ArgumentException.ThrowIfNullOrEmpty(name);
        var options = new MuxWatchHealthCheckOptions();
        configure?.Invoke(options);
        if (options.TimeoutWindow <= TimeSpan.Zero || options.TimeoutThreshold < 0)
        {
            throw new ArgumentOutOfRangeException(nameof(configure), "MuxWatchHealthCheckOptions: TimeoutWindow must be positive and TimeoutThreshold 0 or more");
        }

        return builder.Add(new HealthCheckRegistration(
            name,
            services => new MuxWatchHealthCheck(
                services.GetService<ProbeLoopHealth>() ?? throw new InvalidOperationException("AddHealthChecks().AddMuxWatch() needs AddMuxWatch()"),
                services.GetServices<ITargetStatusSource>(),
                services.GetRequiredService<RecentTimeouts>(),
                services.GetRequiredService<TimeProvider>(),
                options),
            failureStatus,
            tags));
    }
}
