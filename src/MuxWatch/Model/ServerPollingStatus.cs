namespace MuxWatch.Model;

/// <summary>How the polling of one endpoint goes, as <c>/api/targets</c> shows it.</summary>
/// <param name="LastPollSuccess">When a poll last read the server.</param>
/// <param name="LastPollError">The latest poll failure (redacted).</param>
/// <param name="LastPollErrorTime">When it happened.</param>
/// <param name="RefusedCommands">Commands the endpoint refuses (an ACL, a renamed command): their figures are missing, the rest goes on.</param>
/// <param name="ClockOffsetMs">The server's clock minus the client's, from <c>TIME</c>.</param>
/// <param name="LatencyMonitorEnabled">Whether <c>latency-monitor-threshold</c> is above 0 (null when <c>CONFIG GET</c> is refused).</param>
/// <param name="Events">Events in the timeline.</param>
public sealed record ServerPollingStatus(
    DateTimeOffset? LastPollSuccess,
    string? LastPollError,
    DateTimeOffset? LastPollErrorTime,
    IReadOnlyList<string> RefusedCommands,
    double? ClockOffsetMs,
    bool? LatencyMonitorEnabled,
    int Events)
{
    /// <summary>How far <see cref="ClockOffsetMs"/> may be off (half the round trip of the <c>TIME</c> it was read from), in milliseconds; the server's logged events are widened by it.</summary>
    public double? ClockUncertaintyMs { get; init; }

    /// <summary>What the last poll left out because it could not be believed (an absurd slow-log timestamp or duration), with why; empty when nothing was.</summary>
    public IReadOnlyList<string> Dropped { get; init; } = [];

    /// <summary>
    /// When MuxWatch's own plain connection to the server (the witness) was last answered promptly; null
    /// before its first answer or with the witness off (docs/diagnosis.md, "Two witnesses").
    /// </summary>
    public DateTimeOffset? WitnessAnsweredAt { get; init; }

    /// <summary>The round trip of that answer, in milliseconds.</summary>
    public double? WitnessRoundTripMs { get; init; }

    /// <summary>Since when the witness has gone unanswered (a silence running), or could not reach the server; null while it is answered.</summary>
    public DateTimeOffset? WitnessSilentSince { get; init; }

    /// <summary>Why MuxWatch's witness has no connection to the server: its TLS certificate was refused (checked as the poller checks it); null otherwise.</summary>
    public string? WitnessRefused { get; init; }

    /// <summary>
    /// Until when MuxWatch's witness has no connection to the server because one of its TLS reads held the thread
    /// every endpoint's witness shares (over 20 ms: a TLS record trickled in byte by byte); null otherwise. Only a TLS
    /// connection is taken off: a plain one's read and write cannot wait on the server, so a slow one there was the
    /// thread waiting for a CPU. A TLS read slowed that way takes the endpoint's witness off for 30 s all the same.
    /// </summary>
    public DateTimeOffset? WitnessHeldOffUntil { get; init; }
}
