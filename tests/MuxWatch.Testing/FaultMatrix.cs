namespace MuxWatch.Testing;

/// <summary>What the fault matrix sees of MuxWatch watching two targets, <see cref="FaultMatrix.Healthy"/> and <see cref="FaultMatrix.Faulty"/>.</summary>
public interface IWatchingTwoTargets : IAsyncDisposable
{
    /// <summary>The metrics as Prometheus would scrape them now.</summary>
    Task<MetricsText> ScrapeAsync();

    /// <summary>The state MuxWatch reports for <paramref name="target"/> (as <c>/api/targets</c> shows it).</summary>
    Task<string> StateOfAsync(string target);

    /// <summary>
    /// True when MuxWatch made the faulty target's multiplexer (a sidecar target, an app's connection
    /// string), so it saw why its first connection failed; an app's own multiplexer failed before MuxWatch
    /// was handed it, and the client reports a failure once, not on every retry.
    /// </summary>
    bool MadeTheFaultyConnection { get; }

    /// <summary>The last error MuxWatch reports for <paramref name="target"/> (as <c>/api/targets</c> shows it), or null.</summary>
    Task<string?> LastErrorOfAsync(string target);

    /// <summary>Throws when the host is not serving as it should during a fault (the sidecar: <c>/healthz</c>; an app: its probe loop cycling).</summary>
    Task AssertServingAsync();
}

/// <summary>
/// The probe's fault matrix, run the same way for the sidecar and for an app: one target faulty in a
/// given way (<see cref="RedisFaults"/>) next to a healthy one. Throughout, the host serves, no probe
/// cycle runs longer than a second (the loop never waits on the network), the healthy target keeps
/// being probed on time, the fault shows in the metrics and the targets, and where the fault can end,
/// recovery is seen.
/// </summary>
public static class FaultMatrix
{
    public const string Healthy = "healthy";
    public const string Faulty = "faulty";

    /// <summary>Client settings for the faulty target: short enough that a fault shows within seconds.</summary>
    public const string FaultyClientSettings = ",connectTimeout=1000,asyncTimeout=500,syncTimeout=500";

    /// <summary>
    /// Runs <paramref name="fault"/> against the host <paramref name="watch"/> starts for (healthy endpoint,
    /// faulty connection string, the CA the faulty target's TLS certificate is to be checked against or
    /// null); returns what was seen.
    /// </summary>
    public static async Task<string> RunAsync(RedisFaults faults, string fault, string healthyEndpoint, Func<string, string, string?, Task<IWatchingTwoTargets>> watch)
    {
        ArgumentNullException.ThrowIfNull(faults);
        ArgumentNullException.ThrowIfNull(watch);
        var (connectionString, stall, recover, trustedCaFile, reason) = await faults.SetUpAsync(fault).ConfigureAwait(false);
        await using var host = await watch(healthyEndpoint, connectionString + FaultyClientSettings, trustedCaFile).ConfigureAwait(false);
        if (stall is not null)
        {
            await Eventually.UntilAsync(async () => (await host.ScrapeAsync().ConfigureAwait(false)).Value("muxwatch_ping_seconds_count", ("multiplexer", Faulty)) >= 1, $"{fault}: the faulty target's first PING").ConfigureAwait(false);
            _ = Task.Run(stall);
        }

        // During the fault: the host serves, the healthy target is probed on time, the fault shows.
        var healthyProbes = new HashSet<double>();
        await Eventually.UntilAsync(async () =>
        {
            await host.AssertServingAsync().ConfigureAwait(false);
            var metrics = await host.ScrapeAsync().ConfigureAwait(false);
            AssertNoSlowCycle(metrics);
            if (metrics.Value("muxwatch_last_probe_success_timestamp_seconds", ("multiplexer", Healthy)) is { } last)
            {
                healthyProbes.Add(last);
            }

            return healthyProbes.Count >= 5 && await FaultShowsAsync(host, metrics, stall is not null).ConfigureAwait(false);
        }, $"{fault}: the fault to show while the healthy target is probed on").ConfigureAwait(false);

        // Where the fault has a reason to name (a refused certificate, refused credentials), it is named
        // where people look, and no secret with it.
        string? named = null;
        if (reason is not null && host.MadeTheFaultyConnection)
        {
            await Eventually.UntilAsync(async () => (named = await host.LastErrorOfAsync(Faulty).ConfigureAwait(false)) is { } error
                && error.Contains(reason, StringComparison.OrdinalIgnoreCase), $"{fault}: the last error to say \"{reason}\"").ConfigureAwait(false);
            if (named!.Contains("one-1234", StringComparison.Ordinal) || named.Contains("one-5678", StringComparison.Ordinal))
            {
                throw new InvalidOperationException($"{fault}: a password in the last error: {named}");
            }
        }

        if (recover is null)
        {
            return $"{fault}: shown{(named is null ? string.Empty : $" (\"{named}\")")}, the other target probed {healthyProbes.Count} times meanwhile; no recovery to wait for";
        }

        await recover().ConfigureAwait(false);
        var pingsAfter = (await host.ScrapeAsync().ConfigureAwait(false)).Value("muxwatch_ping_seconds_count", ("multiplexer", Faulty)) ?? 0;
        await Eventually.UntilAsync(async () =>
        {
            var metrics = await host.ScrapeAsync().ConfigureAwait(false);
            AssertNoSlowCycle(metrics);
            return metrics.Value("muxwatch_connected", ("multiplexer", Faulty)) == 1
                && metrics.Value("muxwatch_ping_seconds_count", ("multiplexer", Faulty)) > pingsAfter + 2;
        }, $"{fault}: the faulty target to recover", TimeSpan.FromSeconds(60)).ConfigureAwait(false);
        return $"{fault}: shown{(named is null ? string.Empty : $" (\"{named}\")")}, the other target probed {healthyProbes.Count} times meanwhile, then recovered";
    }

    /// <summary>
    /// Throws when any probe cycle so far took longer than <paramref name="bucket"/> seconds (a bucket of
    /// <c>muxwatch_probe_cycle_seconds</c>: "1" or "2.5"). Pick it under the shortest network timeout the
    /// faulty endpoints have: a cycle that waited on one of their calls takes at least that long, whatever the machine.
    /// </summary>
    public static void AssertNoSlowCycle(MetricsText metrics, string bucket = "1")
    {
        ArgumentNullException.ThrowIfNull(metrics);
        var count = metrics.Value("muxwatch_probe_cycle_seconds_count") ?? 0;
        var within = metrics.Value("muxwatch_probe_cycle_seconds_bucket", ("le", bucket)) ?? metrics.Value("muxwatch_probe_cycle_seconds_bucket", ("le", bucket + ".0")) ?? count;
        if (within != count)
        {
            // Inside a wait this is "not yet" until the deadline, and the deadline's error names it.
            throw new InvalidOperationException($"{count - within} probe cycles took longer than {bucket} s");
        }
    }

    private static async Task<bool> FaultShowsAsync(IWatchingTwoTargets host, MetricsText metrics, bool isStall)
    {
        if (isStall)
        {
            return metrics.Samples("muxwatch_ping_failures_total", ("multiplexer", Faulty)).Sum(s => s.Value) >= 1
                || metrics.Value("muxwatch_timeouts_total", ("multiplexer", Faulty)) >= 1;
        }

        return metrics.Value("muxwatch_connected", ("multiplexer", Faulty)) is null or 0
            && await host.StateOfAsync(Faulty).ConfigureAwait(false) != "connected";
    }
}
