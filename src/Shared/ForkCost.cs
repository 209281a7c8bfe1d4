namespace MuxWatch.Model;

/// <summary>
/// What a fork costs a Redis server, from its latest fork and its resident memory. A fork copies the process's page
/// tables, so its pause grows with resident memory (Redis documents 10-20 ms per GB on physical hosts, far more on some
/// VMs): the cost per GB of one fork, times the memory at the next, foretells the next one's pause.
/// </summary>
/// <remarks>
/// One judgement, compiled from this one file into the core (the timeline's projection, <c>ForkTracker</c>) and into
/// MuxWatch.StackExchangeRedis (<c>muxwatch doctor</c>), so the two cannot drift, and neither package exposes it: shared
/// source, as .NET's own libraries share their common code, rather than a public type or a friend assembly across two
/// packages that may be upgraded apart.
/// </remarks>
internal static class ForkCost
{
    /// <summary>
    /// The least memory a fork's cost is spread over, 32 MB: a small server's fork costs a fixed fraction of a millisecond
    /// that does not grow with its memory, and spread over its few megabytes it would foretell absurd pauses once it has grown.
    /// </summary>
    internal const double MinimumBasisBytes = 32 * 1024 * 1024;

    /// <summary>The longest fork believed, an hour in microseconds: a fork that long (or a hostile figure) is nothing to foretell from.</summary>
    internal const long PlausibleForkMicroseconds = 3_600_000_000;

    private const double BytesPerGigabyte = 1e9;

    /// <summary>
    /// Seconds per GB resident of a fork that blocked the server <paramref name="latestForkMicroseconds"/> with
    /// <paramref name="residentBytes"/> resident; null when there is nothing to foretell from (no fork, an implausible one,
    /// no memory figure).
    /// </summary>
    internal static double? SecondsPerGigabyte(long latestForkMicroseconds, double residentBytes) =>
        latestForkMicroseconds is > 0 and < PlausibleForkMicroseconds && residentBytes > 0
            ? latestForkMicroseconds / 1e6 / Basis(residentBytes)
            : null;

    /// <summary>How long the next fork will block the server at <paramref name="residentBytes"/> resident, at <paramref name="secondsPerGigabyte"/>.</summary>
    internal static double ProjectedSeconds(double secondsPerGigabyte, double residentBytes) => secondsPerGigabyte * Basis(residentBytes);

    private static double Basis(double residentBytes) => Math.Max(residentBytes, MinimumBasisBytes) / BytesPerGigabyte;
}
