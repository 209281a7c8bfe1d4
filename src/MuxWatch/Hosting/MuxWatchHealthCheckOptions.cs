using Microsoft.Extensions.Diagnostics.HealthChecks;

namespace MuxWatch.Hosting;

/// <summary>What the MuxWatch health check (<c>AddHealthChecks().AddMuxWatch(...)</c>) counts as unwell.</summary>
public sealed class MuxWatchHealthCheckOptions
{
    /// <summary>How far back timeouts (and connection failures) are counted (default 1 minute).</summary>
    public TimeSpan TimeoutWindow { get; set; } = TimeSpan.FromMinutes(1);

    /// <summary>
    /// How many recorded timeouts and connection failures of one multiplexer within <see cref="TimeoutWindow"/>
    /// make it <see cref="TimeoutStatus"/> (default 10; 0 turns the timeout check off).
    /// </summary>
    public int TimeoutThreshold { get; set; } = 10;

    /// <summary>The status of a multiplexer whose timeouts reached <see cref="TimeoutThreshold"/> (default <see cref="HealthStatus.Degraded"/>).</summary>
    public HealthStatus TimeoutStatus { get; set; } = HealthStatus.Degraded;

    /// <summary>
    /// The status while a multiplexer is still making its first connection (default <see cref="HealthStatus.Degraded"/>;
    /// a disconnected or failed one, and a stalled probe loop, take the registration's failure status).
    /// </summary>
    public HealthStatus ConnectingStatus { get; set; } = HealthStatus.Degraded;
}
