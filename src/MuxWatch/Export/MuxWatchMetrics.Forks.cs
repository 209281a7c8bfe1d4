using Prometheus;

namespace MuxWatch.Export;

/// <summary>The next fork foretold: what a fork costs each endpoint per gigabyte, what the next one will cost, and the timeout it must stay under.</summary>
public sealed partial class MuxWatchMetrics
{
    internal Gauge ServerForkSecondsPerGigabyte { get; private set; } = null!;

    internal Gauge ServerNextForkProjectedSeconds { get; private set; } = null!;

    internal Gauge ServerClientTimeoutSeconds { get; private set; } = null!;

    private void DeclareForkFamilies()
    {
        ServerForkSecondsPerGigabyte = Gauge(SeriesOwner.PolledEndpoint, "muxwatch_server_fork_seconds_per_gigabyte",
            "How long a fork() blocks the endpoint per GB of its resident memory, from its latest fork: latest_fork_usec over used_memory_rss when it forked (32 MB at least).", "endpoint");
        ServerNextForkProjectedSeconds = Gauge(SeriesOwner.PolledEndpoint, "muxwatch_server_next_fork_projected_seconds",
            "How long the endpoint's next fork() (its next BGSAVE, AOF rewrite or full resync) will block it at today's memory: its cost per GB times used_memory_rss.", "endpoint");
        ServerClientTimeoutSeconds = Gauge(SeriesOwner.PolledEndpoint, "muxwatch_server_client_timeout_seconds",
            "The smallest timeout (syncTimeout, asyncTimeout) of the multiplexers watching the endpoint: a pause this long times their requests out.", "endpoint");
    }
}
