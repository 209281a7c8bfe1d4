using MuxWatch.Model;

namespace MuxWatch.Pipeline;

/// <summary>When a request waited, as far as its message tells: the one window every step uses.</summary>
/// <param name="From">When the request started waiting.</param>
/// <param name="To">When it was seen to time out (the catch, or the time it was reported with).</param>
public readonly record struct WaitingWindow(DateTimeOffset From, DateTimeOffset To)
{
    /// <summary>True when evidence from <paramref name="start"/> to <paramref name="end"/> is weighed for this wait (<see cref="Diagnosis.InTheWait"/>: the one rule).</summary>
    internal bool Weighs(DateTimeOffset start, DateTimeOffset end) => Diagnosis.InTheWait.Weighs(From, To, start, end);

    /// <summary>Where evidence stands against this wait, in words (<see cref="Diagnosis.InTheWait.Relation"/>).</summary>
    internal string Relation(DateTimeOffset start, DateTimeOffset end) => Diagnosis.InTheWait.Relation(From, To, start, end);

    /// <summary>The window of a message with neither a timeout nor an elapsed figure (a connection failure, 1.x): the client's default timeout.</summary>
    internal static readonly TimeSpan Default = TimeSpan.FromSeconds(5);

    /// <summary>How the window was taken from the message.</summary>
    internal WaitBasis Basis { get; init; }

    /// <summary>Where evidence starts to be weighed: <see cref="From"/> less <see cref="Diagnosis.InTheWait.Slack"/>.</summary>
    internal DateTimeOffset WeighedFrom => From - DateTimeOffset.MinValue > Diagnosis.InTheWait.Slack ? From - Diagnosis.InTheWait.Slack : DateTimeOffset.MinValue;

    /// <summary>
    /// The note a diagnosis carries when the message gave no wait and evidence with a time was weighed over an
    /// assumed one; null when the message gave it.
    /// </summary>
    internal string? AssumedNote => Basis == WaitBasis.Assumed
        ? $"the message gives no wait (no elapsed time, no timeout): evidence with a time was weighed over the {Default.TotalSeconds:0} s before it was caught (the client's default timeout), so an event in that span may be older than the request"
        : null;

    /// <summary><paramref name="diagnosis"/> with <see cref="AssumedNote"/> when the wait was assumed (once, whatever the step runs again).</summary>
    internal TimeoutDiagnosis WithAssumedNote(TimeoutDiagnosis diagnosis) =>
        AssumedNote is { } note && !diagnosis.Evidence.Any(e => e.Text == note)
            ? diagnosis with { Evidence = [.. diagnosis.Evidence, Evidence.Note(note)] }
            : diagnosis;

    /// <summary>
    /// From the catch back by the message's elapsed figure (async) or its timeout (sync), to the catch;
    /// <see cref="Default"/> when it has neither (or one beyond a day, which no real client writes). When the source sent the
    /// request itself (<paramref name="sent"/>, the probe's PING), from then on by that figure, to the catch at the latest: a
    /// catch a busy process reaches late (seen: a second late on a loaded machine) would otherwise move the whole wait later.
    /// </summary>
    internal static WaitingWindow Of(DateTimeOffset caught, RedisErrorReport report, DateTimeOffset? sent = null)
    {
        ArgumentNullException.ThrowIfNull(report);
        var span = report.WaitedFor ?? Default;
        var basis = report.WaitedFor is null ? WaitBasis.Assumed : report.ElapsedMilliseconds is not null ? WaitBasis.Elapsed : WaitBasis.Timeout;
        if (sent is { } began && report.WaitedFor is not null && began <= caught && DateTimeOffset.MaxValue - began > span)
        {
            return new(began, began + span < caught ? began + span : caught) { Basis = basis };
        }

        return new(caught - DateTimeOffset.MinValue > span ? caught - span : DateTimeOffset.MinValue, caught) { Basis = basis };
    }
}

/// <summary>How a request's wait was taken from its message.</summary>
internal enum WaitBasis
{
    /// <summary>Neither given: the client's default timeout before the catch (<see cref="WaitingWindow.Default"/>).</summary>
    Assumed,

    /// <summary>The message's elapsed figure (async timeouts, 2.x on).</summary>
    Elapsed,

    /// <summary>The message's timeout (sync timeouts, which wait that long).</summary>
    Timeout,
}
