namespace MuxWatch.Model;

/// <summary>
/// What the fleet said of an incident's endpoint over the incident's span: the recorded series of the shipped rules
/// (<c>alerts/muxwatch.rules.yml</c>, group <c>muxwatch.fleet</c>), read from the Prometheus that scrapes every instance
/// (<c>MuxWatch:FleetPrometheusUrl</c>). The third witness, beside the client's message and the server's own record.
/// </summary>
/// <param name="From">The start of the span read (the incident's start).</param>
/// <param name="To">The end of the span read: its last timeout and the minute the rules look back.</param>
/// <param name="Watching">The most instances that watched the endpoint in a minute of the span (each app with MuxWatch in-process, the sidecar's probe); 0 when Prometheus knew none.</param>
/// <param name="Affected">The most of them that timed out on it or lost it in a minute of the span.</param>
/// <param name="Verdict">The rules' verdict in the span.</param>
public sealed record FleetReading(DateTimeOffset From, DateTimeOffset To, int Watching, int Affected, FleetVerdict Verdict)
{
    /// <summary>
    /// True once the span read reaches the minute after the last timeout, as the rules evaluated it: the figures are
    /// final. False for a reading so far (taken sooner, as <c>MuxWatch:FleetReadDelay</c> allows), read again until complete.
    /// </summary>
    public bool Complete { get; init; }

    /// <summary>What the fleet said, as a sentence ("1 of 4 instances timed out on ...; the others were answered").</summary>
    public string Text { get; init; } = string.Empty;

    /// <summary>
    /// Whether the fleet agrees with the cause most of the incident's timeouts were named: true, false, or null when it
    /// cannot say (no verdict, or a cause that either side can have).
    /// </summary>
    public bool? Agrees { get; init; }

    /// <summary>How the fleet weighs on the incident's cause: agreeing, or what to look at first when it disagrees.</summary>
    public string? Weighing { get; init; }
}

/// <summary>The fleet's verdict on an endpoint, as the shipped recording rules give it.</summary>
public enum FleetVerdict
{
    /// <summary>No verdict: too few instances watch the endpoint, or the affected share is between the thresholds.</summary>
    None,

    /// <summary>Most of the instances that watch the endpoint were affected: the server, or the path every client shares.</summary>
    ServerSide,

    /// <summary>One or a few were affected while the rest were answered: the cause is in the affected instances.</summary>
    InstanceSide,
}
