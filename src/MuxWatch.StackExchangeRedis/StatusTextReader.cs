using System.Globalization;
using System.Text;
using System.Text.RegularExpressions;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// Reads the figures that only <c>IConnectionMultiplexer.GetStatus()</c> carries: the client's own timeout
/// totals and the heartbeat's age, from its last line, the same in 2.x and 3.x:
/// <c>Sync timeouts: 1; async timeouts: 50; fire and forget: 0; last heartbeat: 0s ago</c>.
/// </summary>
/// <remarks>
/// Hand-written because the client exposes these figures nowhere else. Older clients leave out
/// <c>async timeouts</c>; a multiplexer whose heartbeat never ran (or that was disposed) says
/// <c>last heartbeat: -1s ago</c>, read as no age. Tests pin it against the real packages' text.
/// </remarks>
internal static partial class StatusTextReader
{
    /// <summary>The figures of one status text; null where the text does not carry them.</summary>
    internal readonly record struct StatusFigures(long? SyncTimeouts, long? AsyncTimeouts, long? FireAndForgetTimeouts, double? HeartbeatAgeSeconds);

    /// <summary>The longest totals line read: the four figures take well under this.</summary>
    private const int MaxTotalsLine = 256;

    /// <summary>
    /// Reads the totals line at the end of a status text written into <paramref name="status"/> (the
    /// probe reuses one buffer per multiplexer: <c>GetStatus(TextWriter)</c> allocates a third less than
    /// <c>GetStatus()</c>, measured in probe-scaling), copying only that line out.
    /// </summary>
    public static StatusFigures Read(StringBuilder status)
    {
        var end = status.Length;
        while (end > 0 && status[end - 1] is '\r' or '\n')
        {
            end--;
        }

        var start = end;
        while (start > 0 && end - start < MaxTotalsLine && status[start - 1] is not ('\r' or '\n'))
        {
            start--;
        }

        return Read(status.ToString(start, end - start));
    }

    public static StatusFigures Read(string? status)
    {
        if (string.IsNullOrEmpty(status))
        {
            return default;
        }

        // The totals line is the last one; search from its start only.
        var at = status.LastIndexOf("Sync timeouts:", StringComparison.Ordinal);
        if (at < 0)
        {
            return default;
        }

        var line = status.AsSpan(at);
        var end = line.IndexOfAny('\r', '\n');
        var text = (end < 0 ? line : line[..end]).ToString();
        double? heartbeat = HeartbeatPattern().Match(text) is { Success: true } match
            && double.TryParse(match.Groups[1].ValueSpan, NumberStyles.Float, CultureInfo.InvariantCulture, out var seconds)
            && seconds >= 0
                ? seconds
                : null;
        return new StatusFigures(Count(text, SyncPattern()), Count(text, AsyncPattern()), Count(text, FireAndForgetPattern()), heartbeat);
    }

    private static long? Count(string text, Regex pattern) =>
        pattern.Match(text) is { Success: true } match && long.TryParse(match.Groups[1].ValueSpan, NumberStyles.None, CultureInfo.InvariantCulture, out var count)
            ? count
            : null;

    [GeneratedRegex(@"Sync timeouts: (\d+)")]
    private static partial Regex SyncPattern();

    [GeneratedRegex(@"async timeouts: (\d+)")]
    private static partial Regex AsyncPattern();

    [GeneratedRegex(@"fire and forget: (\d+)")]
    private static partial Regex FireAndForgetPattern();

    [GeneratedRegex(@"last heartbeat: (-?\d+(?:\.\d+)?)s ago")]
    private static partial Regex HeartbeatPattern();
}
