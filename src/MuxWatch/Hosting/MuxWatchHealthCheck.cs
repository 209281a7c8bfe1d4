using Microsoft.Extensions.Diagnostics.HealthChecks;
using MuxWatch.Sinks;
using MuxWatch.Sources;

namespace MuxWatch.Hosting;

/// <summary>
/// What MuxWatch already knows, as a health check: every watched multiplexer's connection state, its recent
/// timeouts, and whether the probe loop is cycling (a stalled loop means nothing above is fresh).
/// </summary>
internal sealed class MuxWatchHealthCheck(
    ProbeLoopHealth loop,
    IEnumerable<ITargetStatusSource> targets,
    RecentTimeouts recent,
    TimeProvider time,
    MuxWatchHealthCheckOptions options) : IHealthCheck
{
    public Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(context);
        var failure = context.Registration.FailureStatus;
        var status = HealthStatus.Healthy;
        var problems = new List<string>();
        var data = new Dictionary<string, object>(StringComparer.Ordinal);

        void Worsen(HealthStatus to, string problem)
        {
            status = (HealthStatus)Math.Min((int)status, (int)to); // Unhealthy (0) < Degraded (1) < Healthy (2)
            problems.Add(problem);
        }

        if (!loop.IsCycling(out var loopState))
        {
            Worsen(failure, $"the probe loop has stalled ({loopState})");
        }

        data["probeLoop"] = loopState;

        var since = time.GetUtcNow() - options.TimeoutWindow;
        var timeouts = recent.Newest()
            .Where(t => t.Time >= since)
            .GroupBy(t => t.Multiplexer ?? "unknown", StringComparer.Ordinal)
            .ToDictionary(g => g.Key, g => g.Count(), StringComparer.Ordinal);

        var watched = 0;
        foreach (var target in targets.SelectMany(source => source.Targets()).Where(t => t.State != "disposed"))
        {
            watched++;
            var recorded = timeouts.GetValueOrDefault(target.Name);
            data[target.Name] = $"{target.State}, {recorded} timeouts in the last {Span(options.TimeoutWindow)}";
            switch (target.State)
            {
                case "disconnected" or "failed":
                    Worsen(failure, $"{target.Name} is {target.State}{(target.LastError is { } error ? $" ({error})" : "")}");
                    break;
                case "connecting":
                    Worsen(options.ConnectingStatus, $"{target.Name} is connecting");
                    break;
                default:
                    break;
            }

            if (options.TimeoutThreshold > 0 && recorded >= options.TimeoutThreshold)
            {
                Worsen(options.TimeoutStatus, $"{target.Name} had {recorded} timeouts in the last {Span(options.TimeoutWindow)} (threshold {options.TimeoutThreshold})");
            }
        }

        var description = problems.Count > 0
            ? string.Join("; ", problems)
            : $"{watched} multiplexer{(watched == 1 ? "" : "s")} watched, connected; the probe loop cycling";
        return Task.FromResult(new HealthCheckResult(status, description, data: data));
    }

    private static string Span(TimeSpan span) =>
        span.TotalMinutes >= 1 && span.TotalMinutes == Math.Floor(span.TotalMinutes) ? $"{span.TotalMinutes:0} min" : $"{span.TotalSeconds:0.#} s";
}
