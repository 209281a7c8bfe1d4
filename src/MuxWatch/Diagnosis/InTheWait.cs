using System.Globalization;

namespace MuxWatch.Diagnosis;

/// <summary>
/// The one rule for every piece of evidence with a time (a witness's silence, a stack capture, a pool sample, a pause, a
/// server event): it is weighed only where it overlaps the request's wait, from when it began waiting, less
/// <see cref="Slack"/>, to when it gave up. Outside, it is context at most, said with <see cref="Relation"/>, never weighed.
/// </summary>
internal static class InTheWait
{
    /// <summary>
    /// How much earlier than the wait read from a message the request may have begun to wait: the client notices a
    /// timeout on a timer (its heartbeat, a second), so a wait read back from its timeout may have begun that much sooner.
    /// </summary>
    public static readonly TimeSpan Slack = TimeSpan.FromSeconds(1);

    /// <summary>True when evidence from <paramref name="start"/> to <paramref name="end"/> overlaps the wait from <paramref name="from"/> (less <see cref="Slack"/>) to <paramref name="to"/>.</summary>
    public static bool Weighs(DateTimeOffset from, DateTimeOffset to, DateTimeOffset start, DateTimeOffset end) => start <= to && end >= from - Slack;

    /// <summary>Where evidence stands against the wait, in words: "during the wait", "2.1 s before the wait began", "0.8 s after the request gave up".</summary>
    public static string Relation(DateTimeOffset from, DateTimeOffset to, DateTimeOffset start, DateTimeOffset end) =>
        Weighs(from, to, start, end) ? "during the wait"
        : end < from - Slack ? string.Create(CultureInfo.InvariantCulture, $"{(from - end).TotalSeconds:F1} s before the wait began")
        : string.Create(CultureInfo.InvariantCulture, $"{(start - to).TotalSeconds:F1} s after the request gave up");
}
