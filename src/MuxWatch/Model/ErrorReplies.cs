namespace MuxWatch.Model;

/// <summary>
/// The error replies MuxWatch counts by name (<c>muxwatch_error_replies_total{error}</c>): those that say the
/// server or the cluster cannot serve now (a failover, a load, a full memory, a script running), which
/// an app sees instead of, or beside, timeouts. Any other error (a bug's <c>WRONGTYPE</c>, <c>ERR</c>) is
/// <c>other</c>: the label stays bounded whatever the server says.
/// </summary>
internal static class ErrorReplies
{
    /// <summary>The error codes counted by name, then <c>other</c>, in label order.</summary>
    public static IReadOnlyList<string> Codes { get; } =
    [
        "CLUSTERDOWN", "TRYAGAIN", "MASTERDOWN", "READONLY", "LOADING", "BUSY", "OOM", "MISCONF", "NOREPLICAS",
        "NOAUTH", "WRONGPASS", "NOPERM", "other",
    ];

    /// <summary>The index in <see cref="Codes"/> of the error code that starts <paramref name="message"/>, or of <c>other</c>.</summary>
    public static int IndexOf(string? message)
    {
        if (message is null)
        {
            return Codes.Count - 1;
        }

        var end = message.IndexOf(' ', StringComparison.Ordinal);
        var code = end < 0 ? message.AsSpan() : message.AsSpan(0, end);
        for (var i = 0; i < Codes.Count - 1; i++)
        {
            if (code.SequenceEqual(Codes[i]))
            {
                return i;
            }
        }

        return Codes.Count - 1;
    }
}
