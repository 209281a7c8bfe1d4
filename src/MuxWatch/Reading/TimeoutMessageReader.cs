using MuxWatch.Model;

namespace MuxWatch.Reading;

/// <summary>
/// Reads the text of a StackExchange.Redis timeout or connection error, of any client generation
/// (1.x, 2.x, 2.6+ and 3.x), as people paste it: with log prefixes, line breaks, stack traces,
/// keys full of punctuation and missing tails.
/// </summary>
/// <remarks>
/// It never throws and always returns what it could read. Input beyond <see cref="MaxInputChars"/>
/// is ignored: real messages are a few KiB, and a bound keeps a hostile input cheap.
/// </remarks>
public static partial class TimeoutMessageReader
{
    /// <summary>Characters read at most; the rest of a longer input is ignored.</summary>
    public const int MaxInputChars = 32 * 1024;

    private const int MaxKeyLength = 40;

    /// <summary>Linux's limit on a Unix socket's path (<c>sun_path</c>, 108 bytes): a longer "path" is not an endpoint.</summary>
    private const int MaxSocketPathLength = 108;

    private const int MaxKeptTextChars = 4096;
    private const int MaxNotes = 8;
    private const int MaxNoteChars = 512;

    // What one kept entry may hold of field text: real messages carry about 40 fields of a few characters.
    private const int MaxFieldValueChars = 256;
    private const int MaxFieldTextChars = 4096;
    private const int MaxFields = 200;

    /// <summary>
    /// Field names that start the field list after a header; used to find where a key that may itself
    /// contain commas ends, in the older headers that have no <c>(Nms)</c> to close them.
    /// </summary>
    private static readonly HashSet<string> FirstFieldNames = new(StringComparer.Ordinal)
    {
        "inst", "mgr", "err", "queue", "qu", "qs", "qc", "wr", "wq", "in", "ar", "next", "active",
        "timeout", "outbound", "inbound", "command", "aw", "bw", "rs", "ws", "serverEndpoint",
        "clientName", "IOCP", "WORKER", "POOL", "v", "mc",
    };

    private static readonly (string Anchor, RedisErrorKind Kind)[] Headers =
    [
        ("Timeout performing ", RedisErrorKind.SyncTimeout),
        ("Timeout awaiting response", RedisErrorKind.AsyncTimeout),
        ("The message timed out in the backlog", RedisErrorKind.BacklogTimeout),
        ("The timeout was reached before the message could be written to the output buffer, and it was not sent", RedisErrorKind.WriteTimeout),
        ("No connection is active/available to service this operation", RedisErrorKind.NoConnection),
        ("No connection is available to service this operation", RedisErrorKind.NoConnection),
        ("No connection (requires writable - not eligible for replica) is active/available to service this operation", RedisErrorKind.NoConnection),
        ("Connection to Redis never succeeded", RedisErrorKind.NoConnection),
        ("It was not possible to connect to the redis server", RedisErrorKind.ConnectionFailure),
    ];


    private static long _internalFailures;

    /// <summary>
    /// Reads that failed inside the reader and were answered with an empty report, since the process
    /// started. The callers stay protected ("never throws"), but a failure is never silent: tests
    /// assert this stays zero on hostile input, so a reader bug cannot hide behind the catch-all.
    /// </summary>
    internal static long InternalFailures => Interlocked.Read(ref _internalFailures);

    /// <summary>Reads one message. Never throws; an empty or unreadable input gives a report of kind <see cref="RedisErrorKind.Unknown"/> with no fields.</summary>
    public static RedisErrorReport Read(string? text)
    {
        try
        {
            return ReadCore(text ?? string.Empty);
        }
#pragma warning disable CA1031 // the contract is "never throws": a reader bug must cost one message, not the caller
        catch (Exception)
#pragma warning restore CA1031
        {
            Interlocked.Increment(ref _internalFailures);
            return RedisErrorReport.Empty;
        }
    }

    /// <summary>
    /// Reads a caught exception: its message text, with the structured <c>Exception.Data["Redis-..."]</c>
    /// values taking precedence where present (they are exact where the text may be cut).
    /// </summary>
    public static RedisErrorReport Read(Exception exception)
    {
        ArgumentNullException.ThrowIfNull(exception);
        var fromText = Read(exception.Message);
        try
        {
            return MergeData(fromText, exception.GetType().FullName, exception.Data);
        }
#pragma warning disable CA1031 // Exception.Data is app-mutable; a strange entry must not lose the text reading
        catch (Exception)
#pragma warning restore CA1031
        {
            Interlocked.Increment(ref _internalFailures);
            return fromText;
        }
    }

    /// <summary>True for names the client writes as field keys: a letter, then letters, digits, '-' or '_'.</summary>
    internal static bool IsFieldName(ReadOnlySpan<char> name)
    {
        if (name.IsEmpty || name.Length > MaxKeyLength || !char.IsAsciiLetter(name[0]))
        {
            return false;
        }

        foreach (var c in name)
        {
            if (!char.IsAsciiLetterOrDigit(c) && c != '-' && c != '_')
            {
                return false;
            }
        }

        return true;
    }

    private static RedisErrorReport ReadCore(string input)
    {
        // Cut at a token boundary: a cut through "redis://user:pass@..." would leave the password unmarked.
        input = SecretRedactor.CutAtToken(input, MaxInputChars);
        input = PastedText.OutOfJson(input);

        var text = SecretRedactor.Redact(WithoutControlCharacters(Normalize(input)));
        var builder = new ReportBuilder { Text = text.Length > MaxKeptTextChars ? text[..MaxKeptTextChars] : text };

        const string theftMarker = "possible thread-theft indicated";
        var theft = text.IndexOf(theftMarker, StringComparison.OrdinalIgnoreCase);
        if (theft >= 0)
        {
            builder.ThreadTheft = true;
            text = RemoveThreadTheftMarker(text, theft);
        }

        var (headerAt, kind, anchor) = FindHeader(text);
        builder.Kind = kind;
        builder.ExceptionType = FindExceptionType(headerAt >= 0 ? text[..headerAt] : text);

        string rest;
        if (headerAt < 0)
        {
            rest = text;
        }
        else
        {
            var afterAnchor = text[(headerAt + anchor.Length)..];
            rest = kind switch
            {
                RedisErrorKind.SyncTimeout => ReadSyncHeader(afterAnchor, builder),
                RedisErrorKind.AsyncTimeout => ReadAsyncHeader(afterAnchor, builder),
                RedisErrorKind.BacklogTimeout => ReadBacklogHeader(afterAnchor, builder),
                RedisErrorKind.NoConnection => ReadNoConnectionHeader(afterAnchor, builder),
                RedisErrorKind.ConnectionFailure when anchor.Length == 0 => ReadFailureHeader(afterAnchor, builder),
                _ => afterAnchor,
            };
        }

        ReadFields(rest, builder);
        return builder.Build();
    }

    private static (int At, RedisErrorKind Kind, string Anchor) FindHeader(string text)
    {
        var best = (At: -1, Kind: RedisErrorKind.Unknown, Anchor: string.Empty);
        foreach (var (anchor, kind) in Headers)
        {
            // Ordinal: the client writes its headers in one fixed case, and this runs for every message.
            var at = text.IndexOf(anchor, StringComparison.Ordinal);
            if (at >= 0 && (best.At < 0 || at < best.At))
            {
                best = (at, kind, anchor);
            }
        }

        if (best.At < 0 && TryFindConnectionFailureHeader(text, out var failureAt))
        {
            return (failureAt, RedisErrorKind.ConnectionFailure, string.Empty);
        }

        return best;
    }

    private static string? FindExceptionType(string prefix)
    {
        // The last token ending in "Exception" that mentions Redis, e.g. "StackExchange.Redis.RedisTimeoutException:".
        var end = prefix.LastIndexOf("Exception", StringComparison.Ordinal);
        while (end >= 0)
        {
            var stop = end + "Exception".Length;
            var start = end;
            while (start > 0 && end - start < 120 && (char.IsAsciiLetterOrDigit(prefix[start - 1]) || prefix[start - 1] is '.' or '_'))
            {
                start--;
            }

            var name = prefix[start..stop];
            if (name.Contains("Redis", StringComparison.Ordinal) && name.Length <= 120)
            {
                return name;
            }

            end = end == 0 ? -1 : prefix.LastIndexOf("Exception", end - 1, StringComparison.Ordinal);
        }

        return null;
    }
}
